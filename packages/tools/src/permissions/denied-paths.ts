import { homedir } from "node:os";
import { type PermissionRule, parsePermissionRule, ruleMatches } from "./permission-rules.js";

/** Deny rules the directory-wide tools apply to what they list (see deniedPathFilters). */
export interface DeniedPathsOption {
  /** `permissions.deny` of the settings; rules without a path specifier are ignored here. */
  readonly denyRules?: readonly string[];
}

/**
 * Which files a directory-wide tool (Grep, Glob, LS) must leave out of its output. The permission
 * checker only sees the directory a Grep searches, so without this `deny: ["Read(./.env)"]` would
 * stop `Read .env` but not `Grep SECRET .` (Claude Code also feeds read-deny rules to ripgrep).
 * The rules are parsed once, when the tool is created; the returned function builds a call's
 * filter, anchored at the call's cwd as the checker anchors rules at the project root. That
 * filter is undefined when no path rule exists.
 */
export function deniedPathFilters(
  toolName: string,
  option: DeniedPathsOption,
): (cwd: string) => ((path: string) => boolean) | undefined {
  const rules = (option.denyRules ?? [])
    .map((raw) => parsePermissionRule(raw))
    .filter((rule): rule is PermissionRule => !("error" in rule) && rule.specifier?.type === "path");
  if (rules.length === 0) return () => undefined;
  return (cwd) => {
    const context = { cwd, home: homedir() };
    return (path) => rules.some((rule) => ruleMatches(rule, toolName, { file_path: path }, "deny", context));
  };
}
