import type { Tool } from "@forkloop/loop-core";
import { createBuiltinTools, PERMISSION_MODES, parsePermissionRule } from "@forkloop/tools";
import { z } from "zod";
import { closestFlag } from "./flags.js";

/** The model used when `--model` is not given (the simulator knows it too). */
export const DEFAULT_MODEL = "claude-sonnet-4-6";

/** `--permission-mode`: the modes the tools package (and its settings' `defaultMode`) knows. */
export const modeSchema = z.enum(PERMISSION_MODES, {
  message: `must be one of ${PERMISSION_MODES.join(", ")}`,
});

/** Names of the built-in tools (R-T3), as the model sees them. */
export function builtinToolNames(): string[] {
  return createBuiltinTools().map((tool) => tool.name);
}

/**
 * Splits `Read, Bash(npm test:*),Edit(src/**)` at commas (or spaces) outside parentheses, so a
 * rule's own spaces and commas survive.
 */
export function splitRules(text: string): string[] {
  const rules: string[] = [];
  let depth = 0;
  let current = "";
  for (const char of text) {
    if (char === "(") depth++;
    if (char === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (char === "," || /\s/.test(char))) {
      if (current.trim()) rules.push(current.trim());
      current = "";
      continue;
    }
    current += char;
  }
  if (current.trim()) rules.push(current.trim());
  return rules;
}

/** `--allowed-tools Read,Grep` / `--disallowed-tools Bash`: a comma list of known tool names. */
export const toolListSchema = z
  .string()
  .transform(splitRules)
  .superRefine((names, ctx) => {
    const known = builtinToolNames();
    for (const name of names) {
      // A rule like `Bash(npm test:*)` names a tool too; the tool is what must exist.
      const tool = name.replace(/\(.*$/s, "");
      if (!known.includes(tool)) {
        const suggestion = closestFlag(tool, known);
        ctx.addIssue({
          code: "custom",
          message: `unknown tool "${tool}"${suggestion ? ` (did you mean ${suggestion}?)` : ""}; the tools are ${known.join(", ")}`,
        });
        continue;
      }
      const parsed = parsePermissionRule(name);
      if ("error" in parsed) ctx.addIssue({ code: "custom", message: `rule "${name}": ${parsed.error}` });
    }
  });

/** Claude Code's flags: `--allowed-tools` are allow rules, `--disallowed-tools` deny rules. */
export interface PermissionRules {
  readonly allow: string[];
  readonly ask: string[];
  readonly deny: string[];
}

/**
 * The built-in tools offered to the model: all of them minus those a bare deny rule names
 * (`--disallowed-tools Bash` removes Bash; `Bash(rm:*)` only denies matching calls). The deny
 * rules also go to the tools, so Grep/Glob/LS leave out files a path rule hides (R-P1:
 * `Read(./.env)` must stop `Grep SECRET .` too, which the per-call checker cannot see).
 */
export function selectTools(deny: readonly string[] = []): Tool[] {
  const removed = new Set(deny.filter((rule) => !rule.includes("(")));
  return createBuiltinTools({ denyRules: deny }).filter((tool) => !removed.has(tool.name));
}
