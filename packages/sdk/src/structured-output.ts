import { apiOutputSchema } from "@forkloop/loop-core";
import type { SDKResultMessage } from "./messages.js";
import type { Options } from "./options.js";

/**
 * `outputFormat` (structured outputs): the session's requests carry `output_config.format`, so
 * the final reply is JSON for the schema; the result carries it parsed as `structured_output`, as
 * the Agent SDK's does. A final reply that is not JSON (a model that ignored the format, or a
 * reply cut at max_tokens) is the Agent SDK's `error_max_structured_output_retries`: forkloop
 * does not re-ask, so the error says what came back.
 */
export function withStructuredOutput(
  result: SDKResultMessage,
  format: Options["outputFormat"],
): SDKResultMessage {
  if (format === undefined || result.subtype !== "success") return result;
  try {
    return { ...result, structured_output: JSON.parse(result.result) };
  } catch {
    const error = `outputFormat: the final reply is not JSON for the schema (it begins ${JSON.stringify(result.result.slice(0, 80))})`;
    return { ...result, subtype: "error_max_structured_output_retries", is_error: true, errors: [error] };
  }
}

/**
 * R-K2: `outputFormat` as the requests carry it — its schema through the official SDK's transform
 * (apiOutputSchema), as `--json-schema`'s: a constraint structured outputs refuse (`minLength`,
 * `minimum` …) moves into its property's description. The Agent SDK takes such a schema (Claude
 * Code 2.1.332 offers it, as written, as its StructuredOutput tool's input schema), so it must
 * not be a 400 here. A schema the transform cannot take goes as written (the API says what is
 * wrong); one already transformed comes out the same.
 */
export function requestOutputFormat(format: Options["outputFormat"]): Options["outputFormat"] {
  if (format === undefined) return undefined;
  try {
    return { ...format, schema: apiOutputSchema(format.schema) };
  } catch {
    return format;
  }
}
