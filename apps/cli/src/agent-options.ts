import { builtinToolNames, FORK_TOOL_NAMES } from "@forkloop/sdk";
import { PERMISSION_MODES, parsePermissionRule } from "@forkloop/tools";
import { z } from "zod";
import { closestFlag } from "./flags.js";

/** `--permission-mode`: the modes the tools package (and its settings' `defaultMode`) knows. */
export const modeSchema = z.enum(PERMISSION_MODES, {
  message: `must be one of ${PERMISSION_MODES.join(", ")}`,
});

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

const MCP_RULE = /^mcp__[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*(?:__(?:\*|[A-Za-z0-9_-]+))?$/;

/**
 * `--allowed-tools Read,Grep` / `--disallowed-tools Bash,Agent`: a comma list of rules naming
 * known tools — the built-in ones, the fork tools (Agent, its former name Task, Skill) — or MCP rules.
 */
export const toolListSchema = z
  .string()
  .transform(splitRules)
  .superRefine((names, ctx) => {
    const known = [...builtinToolNames(), ...FORK_TOOL_NAMES];
    for (const name of names) {
      // MCP tools are known only once their servers start: `mcp__server`, `mcp__server__*` and
      // `mcp__server__tool` are checked for form here and match when the session has the tools.
      if (name.startsWith("mcp__")) {
        if (!MCP_RULE.test(name)) {
          ctx.addIssue({
            code: "custom",
            message: `rule "${name}": write MCP rules as mcp__server, mcp__server__* or mcp__server__tool (letters, digits, "_" and "-")`,
          });
        }
        continue;
      }
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

/** `--max-budget-usd N` (run and batch): dollars, more than 0. */
export const budgetUsdSchema = z
  .string()
  .regex(/^\d+(\.\d+)?$/, "must be an amount in US dollars, e.g. --max-budget-usd 5 or 0.50")
  .transform(Number)
  .refine((value) => value > 0, "must be more than 0");
