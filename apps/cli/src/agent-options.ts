import type { PermissionMode, Tool } from "@forkloop/loop-core";
import { createBuiltinTools } from "@forkloop/tools";
import { z } from "zod";
import { closestFlag } from "./flags.js";

/** The model used when `--model` is not given (the simulator knows it too). */
export const DEFAULT_MODEL = "claude-sonnet-4-6";

export const PERMISSION_MODES: readonly PermissionMode[] = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
  "dontAsk",
  "auto",
];

export const modeSchema = z.enum(PERMISSION_MODES as [PermissionMode, ...PermissionMode[]], {
  message: `must be one of ${PERMISSION_MODES.join(", ")}`,
});

/** Names of the built-in tools (R-T3), as the model sees them. */
export function builtinToolNames(): string[] {
  return createBuiltinTools().map((tool) => tool.name);
}

/** `--allowed-tools Read,Grep` / `--disallowed-tools Bash`: a comma list of known tool names. */
export const toolListSchema = z
  .string()
  .transform((text) =>
    text
      .split(/[,\s]+/)
      .map((name) => name.trim())
      .filter(Boolean),
  )
  .superRefine((names, ctx) => {
    const known = builtinToolNames();
    for (const name of names) {
      // Claude Code rule syntax `Bash(npm test:*)` names a tool too; the tool is what must exist.
      const tool = name.replace(/\(.*$/, "");
      if (!known.includes(tool)) {
        const suggestion = closestFlag(tool, known);
        ctx.addIssue({
          code: "custom",
          message: `unknown tool "${tool}"${suggestion ? ` (did you mean ${suggestion}?)` : ""}; the tools are ${known.join(", ")}`,
        });
      }
    }
  });

/** Claude Code's flags: `--allowed-tools` are allow rules, `--disallowed-tools` deny rules. */
export interface PermissionRules {
  readonly allow: string[];
  readonly ask: string[];
  readonly deny: string[];
}

export function permissionRules(
  allowed: readonly string[] = [],
  disallowed: readonly string[] = [],
): PermissionRules {
  return { allow: [...allowed], ask: [], deny: [...disallowed] };
}

/**
 * The built-in tools offered to the model: all of them minus those a bare deny rule names
 * (`--disallowed-tools Bash` removes Bash; `Bash(rm:*)` only denies matching calls).
 */
export function selectTools(disallowed: readonly string[] = []): Tool[] {
  const removed = new Set(disallowed.filter((rule) => !rule.includes("(")));
  return createBuiltinTools().filter((tool) => !removed.has(tool.name));
}
