import { isAbsolute, relative, resolve } from "node:path";
import { type LinearIgnore, linearIgnore } from "../patterns/linear-gitignore.js";
import { analyzeShell } from "../shell/analyze-shell.js";
import { type ResolvedPath, realpathAllowingMissing } from "../workspace-paths.js";
import { commandMatchesRule } from "./bash-rule-match.js";
import { mcpServerPrefix, toolNameMatches } from "./tool-name-patterns.js";

/** What the parenthesised part of a rule means for its tool. */
export type RuleSpecifier =
  | { readonly type: "command-exact"; readonly command: string }
  | { readonly type: "command-prefix"; readonly prefix: string }
  | { readonly type: "command-wildcard"; readonly pattern: string }
  | { readonly type: "path"; readonly pattern: string }
  | { readonly type: "domain"; readonly domain: string }
  | { readonly type: "other"; readonly content: string };

/** A rule in Claude Code's syntax: `Tool` or `Tool(specifier)`. */
export interface PermissionRule {
  readonly raw: string;
  readonly toolName: string;
  /** Absent: the rule covers every call of the tool. */
  readonly specifier?: RuleSpecifier;
}

const PATH_TOOLS = new Set(["Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS"]);
/**
 * Claude Code applies `Read(...)` rules to every file-reading tool and `Edit(...)` rules to every
 * file-editing tool, so `deny: ["Read(./.env)"]` also keeps Grep out of `.env`.
 */
const RULE_FAMILIES: Readonly<Record<string, readonly string[]>> = {
  Read: ["Read", "Glob", "Grep", "LS"],
  Edit: ["Edit", "Write", "MultiEdit", "NotebookEdit"],
};
const RULE_SYNTAX = /^([A-Za-z_][A-Za-z0-9_-]*)(?:\(([\s\S]*)\))?$/;
const SYNTAX_HELP =
  "Write a rule as Tool or Tool(specifier), e.g. Bash, Bash(npm test:*), Edit(src/**), Read(./.env), mcp__server__*.";

export function parsePermissionRule(rule: string): PermissionRule | { readonly error: string } {
  if (typeof rule !== "string" || rule.trim().length === 0)
    return { error: `Empty permission rule. ${SYNTAX_HELP}` };
  const raw = rule.trim();
  // `mcp__server__*` is `mcp__server`: every tool of that MCP server (R-M1).
  if (raw.endsWith("__*") && mcpServerPrefix(raw) !== undefined) return { raw, toolName: raw.slice(0, -3) };
  const match = RULE_SYNTAX.exec(raw);
  if (match === null) {
    const hint = raw.includes("(") && !raw.endsWith(")") ? ' (missing the closing ")")' : "";
    return { error: `Invalid permission rule ${JSON.stringify(raw)}${hint}. ${SYNTAX_HELP}` };
  }
  const toolName = match[1] as string;
  const content = match[2]?.replace(/\\([()])/g, "$1").trim();
  // `Bash()` and `Bash(*)` mean the same as `Bash`, as in Claude Code.
  if (content === undefined || content === "" || content === "*") return { raw, toolName };
  return { raw, toolName, specifier: parseSpecifier(toolName, content) };
}

function parseSpecifier(toolName: string, content: string): RuleSpecifier {
  if (toolName === "Bash") {
    if (content.endsWith(":*"))
      return { type: "command-prefix", prefix: normalizeSpaces(content.slice(0, -2)) };
    if (content.includes("*")) return { type: "command-wildcard", pattern: normalizeSpaces(content) };
    return { type: "command-exact", command: normalizeSpaces(content) };
  }
  if (PATH_TOOLS.has(toolName)) return { type: "path", pattern: content };
  if (content.startsWith("domain:")) return { type: "domain", domain: content.slice("domain:".length) };
  return { type: "other", content };
}

export interface RuleMatchContext {
  /** Relative patterns (`src/**`, `./x`) and `/x` patterns are anchored here (the project root). */
  readonly cwd: string;
  readonly home: string;
  /** realpath for path rules (default realpathAllowingMissing); a Bash judgement passes a memoized one. */
  readonly realPath?: (path: string) => ResolvedPath;
}

/**
 * Whether `rule` covers this call. `purpose` decides how compound shell commands are judged:
 * an `allow` rule must cover every part of `a && b` (and never covers hidden `$(…)` commands),
 * a `deny`/`ask` rule covers the command when it covers any part.
 */
export function ruleMatches(
  rule: PermissionRule,
  toolName: string,
  input: Record<string, unknown>,
  purpose: "allow" | "deny",
  context: RuleMatchContext,
): boolean {
  const family = RULE_FAMILIES[rule.toolName];
  if (!(family?.includes(toolName) ?? toolNameMatches(rule.toolName, toolName))) return false;
  const specifier = rule.specifier;
  if (specifier === undefined) return true;
  switch (specifier.type) {
    case "command-exact":
    case "command-prefix":
    case "command-wildcard": {
      if (typeof input.command !== "string") return false;
      // The permission checker judges Bash with judgeBash; this keeps ruleMatches true to it (R-S1).
      const analysis = analyzeShell(input.command);
      if (purpose === "deny")
        return analysis.commands.some((part) => commandMatchesRule(specifier, part, "deny"));
      const parts = analysis.commands.filter((part) => !part.wraps);
      return (
        analysis.opaque.length === 0 &&
        parts.length > 0 &&
        parts.every((part) => commandMatchesRule(specifier, part, "allow"))
      );
    }
    case "path": {
      const target = targetPath(toolName, input, context.cwd);
      if (target === undefined) return false;
      const real = (context.realPath ?? realpathAllowingMissing)(target);
      const candidates = real.ok && real.path !== target ? [target, real.path] : [target];
      const test = (path: string): boolean => pathMatches(specifier.pattern, path, context);
      // Through a symlink the same file has two names: deny if either matches, allow only if both do.
      return purpose === "deny" ? candidates.some(test) : candidates.every(test);
    }
    case "domain":
      return domainMatches(specifier.domain, input.url, purpose);
    case "other":
      // No built-in tool takes another specifier kind: such rules parse but never match here.
      return false;
    default: {
      const unreachable: never = specifier;
      throw new Error(`unknown rule specifier ${JSON.stringify(unreachable)}`);
    }
  }
}

/**
 * `WebFetch(domain:example.com)` (R-T6): the URL's host is that domain; `domain:*.example.com`
 * also covers its subdomains. A URL that does not parse matches a deny rule (it is refused
 * anyway) and no allow rule.
 */
function domainMatches(domain: string, url: unknown, purpose: "allow" | "deny"): boolean {
  let host: string;
  try {
    host = new URL(String(url)).hostname.toLowerCase().replace(/^\[|\]$/g, "");
  } catch {
    return purpose === "deny";
  }
  const wanted = domain.trim().toLowerCase();
  if (wanted.startsWith("*.")) return host === wanted.slice(2) || host.endsWith(wanted.slice(1));
  return host === wanted;
}

/** The file a call touches: file_path for Read/Write/Edit, path (default cwd) for Glob/Grep/LS. */
function targetPath(toolName: string, input: Record<string, unknown>, cwd: string): string | undefined {
  const given = typeof input.file_path === "string" ? input.file_path : input.path;
  if (typeof given === "string") return isAbsolute(given) ? resolve(given) : resolve(cwd, given);
  return toolName === "Glob" || toolName === "Grep" ? cwd : undefined;
}

/**
 * Claude Code's path rule anchors: `//abs` from the filesystem root, `~/x` from home, `/x` and
 * `x`/`./x` from the project root; the rest is a gitignore pattern (so `*.env` matches at any depth),
 * on the linear-time engine: a project may ship rules, and the path is the model's (R-S12).
 */
function pathMatches(pattern: string, path: string, context: RuleMatchContext): boolean {
  let root = context.cwd;
  let body = pattern;
  if (pattern.startsWith("//")) {
    root = "/";
    body = pattern.slice(2);
  } else if (pattern.startsWith("~/")) {
    root = context.home;
    body = pattern.slice(2);
  } else if (pattern.startsWith("/")) body = pattern.slice(1);
  else if (pattern.startsWith("./")) body = pattern.slice(2);
  // In gitignore a pattern with a slash is anchored; "./.env" means the project's own .env.
  if (pattern.startsWith("./") && !body.includes("/")) body = `/${body}`;
  const relativePath = relative(root, path);
  if (
    relativePath === "" ||
    relativePath === ".." ||
    relativePath.startsWith("../") ||
    isAbsolute(relativePath)
  )
    return false;
  let matcher = compiledPatterns.get(body);
  if (matcher === undefined) {
    matcher = linearIgnore().add(body);
    compiledPatterns.set(body, matcher);
  }
  return matcher.ignores(relativePath);
}

/** Compiled gitignore patterns by rule body: a Bash decision matches the same few rules against every path it sees. */
const compiledPatterns = new Map<string, LinearIgnore>();

function normalizeSpaces(text: string): string {
  return text.trim().replace(/\s+/g, " ");
}
