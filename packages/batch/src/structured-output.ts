import { apiOutputSchema, jsonSchemaInput } from "@forkloop/loop-core";

/**
 * R-B6: a batch's `--json-schema`. Items' requests carry `output_config.format` (the Messages
 * API's structured outputs: the reply's text is JSON for the schema), and each item's final text
 * is still parsed and validated here — a reply cut at max_tokens, a model or endpoint that ignored
 * the format, are hostile input — so `structuredOutput` in results.jsonl is always a valid object.
 */
export type StructuredCheck =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

/** The schema compiled once: a problem naming why it cannot be used, or the check of an answer. */
export function structuredOutputCheck(
  schema: Record<string, unknown>,
):
  | { readonly ok: true; readonly check: (text: string) => StructuredCheck }
  | { readonly ok: false; readonly error: string } {
  const compiled = jsonSchemaInput(schema);
  if (!compiled.ok) return { ok: false, error: compiled.error.replace("the input schema", "the schema") };
  return {
    ok: true,
    check(text) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        return {
          ok: false,
          reason: `the final answer is not JSON (it begins ${JSON.stringify(text.slice(0, 80))})`,
        };
      }
      const parsed = compiled.inputSchema.safeParse(value);
      if (parsed.success) return { ok: true, value };
      const issue = parsed.error.issues[0];
      const where = issue === undefined || issue.path.length === 0 ? "" : ` at ${issue.path.join(".")}`;
      return {
        ok: false,
        reason: `the final answer does not match the schema${where}: ${issue?.message ?? "invalid"}`,
      };
    },
  };
}

/**
 * Why `schema` cannot be a batch's `--json-schema` — it does not compile, or a request cannot
 * carry it — or undefined when it can. A queued batch's schema is read from Redis: every worker
 * checks it again (R-B1, trust).
 */
export function outputSchemaProblem(schema: Record<string, unknown>): string | undefined {
  const compiled = structuredOutputCheck(schema);
  if (!compiled.ok) return compiled.error;
  try {
    apiOutputSchema(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
