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
