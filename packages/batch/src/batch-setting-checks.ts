import { checkId } from "@forkloop/sdk";
import { PERMISSION_MODES, parsePermissionRule } from "@forkloop/tools";
import { z } from "zod";

/**
 * The field checks of a batch's stored settings. A queued batch's settings come from Redis, and
 * whoever can write there chooses what `forkloop worker` runs on every host (R-B1, trust):
 * they are hostile input, held to what `forkloop batch` itself would have accepted as flags —
 * not merely to the right JSON types. The same schema reads a local batch's batch.json.
 */

/** `--max-turns` at most (the batch flag's bound): a stored billion would be an unbounded run. */
export const MAX_BATCH_TURNS = 1000;
/** Rules per list: far beyond any real batch, small enough to match every call cheaply. */
const MAX_RULES = 1000;

/** A batch or item id: used in file names and Redis keys, so no separators and no `..`. */
export const safeIdSchema = z.string().refine(
  (id) => {
    try {
      checkId("batch", id);
      return true;
    } catch {
      return false;
    }
  },
  { message: 'must be letters, digits, ".", "_" and "-" (at most 128, no "..")' },
);

/**
 * A model id as sent to the API (aliases are resolved before a batch is stored): no spaces or
 * control characters, so a stored model cannot write terminal escapes into a worker's log.
 * Covers the API's ids and Bedrock's / Vertex's (`anthropic.claude-…-v2:0`, `claude-…@20241022`).
 */
export const modelIdSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:@/[\]-]{0,127}$/, {
  message: "must be a model id (letters, digits and . _ : @ / - [ ], at most 128)",
});

export const permissionModeSchema = z.enum(PERMISSION_MODES, {
  message: `must be one of ${PERMISSION_MODES.join(", ")}`,
});

/** A permission rule as `--allowed-tools` / `--disallowed-tools` parse it (R-S1 syntax). */
const permissionRuleSchema = z.string().superRefine((rule, ctx) => {
  // Control characters have no place in a rule and would reach the worker's log verbatim.
  if (/\p{Cc}/u.test(rule)) {
    ctx.addIssue({ code: "custom", message: "a rule may not contain control characters" });
    return;
  }
  const parsed = parsePermissionRule(rule);
  if ("error" in parsed) ctx.addIssue({ code: "custom", message: parsed.error });
});

export const ruleListSchema = z
  .array(permissionRuleSchema)
  .max(MAX_RULES, { message: `at most ${MAX_RULES} rules` });

/** Zod's issues as one line a person can act on: `spec.permissionMode: must be one of …`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .slice(0, 3)
    .map((issue) => (issue.path.length === 0 ? issue.message : `${issue.path.join(".")}: ${issue.message}`))
    .join("; ");
}
