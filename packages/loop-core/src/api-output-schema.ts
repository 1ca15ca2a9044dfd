import { createRequire } from "node:module";

type JsonSchemaHelper = typeof import("@anthropic-ai/sdk/helpers/json-schema");

const require = createRequire(import.meta.url);
let helper: JsonSchemaHelper | undefined;

/**
 * R-B6, R-X3: the schema a request's `output_config.format` carries for a user's JSON Schema
 * (`run --json-schema`, a batch's `--json-schema`). The API refuses constraints structured
 * outputs do not support (`minLength`, `minimum`, `maxItems`, most string formats — structured
 * outputs page, https://platform.claude.com/docs/en/build-with-claude/structured-outputs), so the
 * schema goes through the official SDK's own transform (`jsonSchemaOutputFormat`, as its
 * `zodOutputFormat` and `betaZodOutputFormat` helpers do): such a constraint moves into the
 * property's description as `{minLength: 3}`, every object gets `additionalProperties: false`.
 * The answer is still checked against the schema as the user wrote it. The helper is required
 * at first use so a session without a schema does not load it. Throws, naming the problem, for a
 * schema the transform cannot take (a root that is not an object, a property without a type).
 */
export function apiOutputSchema(schema: Record<string, unknown>): Record<string, unknown> {
  helper ??= require("@anthropic-ai/sdk/helpers/json-schema") as JsonSchemaHelper;
  return helper.jsonSchemaOutputFormat(schema as Parameters<JsonSchemaHelper["jsonSchemaOutputFormat"]>[0])
    .schema as Record<string, unknown>;
}
