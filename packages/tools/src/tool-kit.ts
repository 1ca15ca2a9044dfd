import { statSync } from "node:fs";
import { stat } from "node:fs/promises";
import { isAbsolute, resolve } from "node:path";
import type { AgentState, Tool, ToolResult } from "@forkloop/loop-core";
import type { z } from "zod";
import { BUILTIN_INPUT_JSON_SCHEMAS } from "./builtin-input-json-schemas.js";
import { protectedWriteTarget } from "./permissions/protected-paths.js";

/**
 * Lets TypeScript infer a built-in tool's input type from its schema, and gives the tool its
 * input JSON Schema as computed ahead (BUILTIN_INPUT_JSON_SCHEMAS).
 */
export function defineTool<Schema extends z.ZodType<Record<string, unknown>>>(
  tool: Tool<Schema>,
): Tool<Schema> {
  // R-V2: the definition sent is the JSON Schema computed ahead; the zod schema (lazy) is built at
  // the tool's first call, not for the session's first request.
  const inputJSONSchema = tool.inputJSONSchema ?? BUILTIN_INPUT_JSON_SCHEMAS[tool.name];
  return inputJSONSchema === undefined ? tool : { ...tool, inputJSONSchema };
}

/** An expected failure, returned to the model as an is_error tool_result (R-T1), never thrown. */
export function toolError(message: string): ToolResult {
  return { content: message, isError: true };
}

/** How a file-system failure is named in a tool error: its errno code (`EACCES`), else its text. */
export function fsErrorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? String(error);
}

/** R-T1 backfill: hooks and permission rules see absolute paths, as in Claude Code. */
export function absolutePath(path: string, cwd: string): string {
  if (path.length === 0 || path.startsWith("~") || path.includes("\0")) return path;
  return isAbsolute(path) ? path : resolve(cwd, path);
}

/** Remembers what this agent saw of a file so Write/Edit can refuse stale overwrites. */
export function recordRead(state: AgentState, path: string, stats: { mtimeMs: number; size: number }): void {
  state.readFiles.set(path, { mtimeMs: stats.mtimeMs, size: stats.size });
}

/**
 * Records what this agent just wrote as read, when the name still leads to a file: another
 * process may have moved it (or a directory on its way) since, and then the next Edit must read
 * it again, not fail this one.
 */
export function recordWritten(state: AgentState, path: string): void {
  try {
    recordRead(state, path, statSync(path));
  } catch {
    state.readFiles.delete(path);
  }
}

/**
 * Write and Edit may change an existing file only after this agent read it and while the file is
 * unchanged on disk since; otherwise the model would overwrite edits it never saw (R-T3).
 * Returns the refusal message, or undefined when the write may go ahead.
 */
export function staleWriteRefusal(
  state: AgentState,
  path: string,
  stats: { mtimeMs: number; size: number },
): string | undefined {
  const seen = state.readFiles.get(path);
  if (seen === undefined) {
    return `File has not been read yet. Read ${path} first before writing to it.`;
  }
  if (seen.mtimeMs !== stats.mtimeMs || seen.size !== stats.size) {
    return (
      `${path} has been modified since it was read, either by the user or by a linter. ` +
      "Read it again before attempting to write it."
    );
  }
  return undefined;
}

/** Numbers lines as Claude Code's Read does (R-X1): the number, a tab, the text. */
export function numberLines(lines: readonly string[], firstLineNumber: number): string {
  return lines.map((line, index) => `${firstLineNumber + index}\t${line}`).join("\n");
}

/** Newest modification first, name order among equals: Claude Code's order for Glob and Grep results. */
export async function sortNewestFirst(paths: readonly string[]): Promise<string[]> {
  const withTimes = await Promise.all(
    paths.map(async (path) => ({ path, mtimeMs: (await stat(path).catch(() => undefined))?.mtimeMs ?? 0 })),
  );
  withTimes.sort((left, right) => right.mtimeMs - left.mtimeMs || (left.path < right.path ? -1 : 1));
  return withTimes.map((entry) => entry.path);
}

/** True when `path` exists and is a directory. */
export async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

/**
 * Why a Write or Edit is refused when its name as given leads, through a symlink, into a
 * protected directory (R-S10): the permission check and the tool resolve the name apart, so a
 * directory flipped to a symlink into `.git/hooks` between the two would be approved under its own
 * name and written at the hooks path. The name must then be given as the real path, which the check
 * judges as such. bypassPermissions approves protected writes anyway. Undefined: go on.
 */
export function symlinkIntoProtected(
  given: string,
  real: string,
  context: {
    readonly cwd: string;
    readonly workspaceRoots: readonly string[];
    readonly options: { readonly permissionMode: string };
  },
): string | undefined {
  if (context.options.permissionMode === "bypassPermissions") return undefined;
  const absolute = absolutePath(given, context.cwd);
  if (absolute === real) return undefined;
  const what = protectedWriteTarget(real, { cwd: context.cwd, workspaceRoots: context.workspaceRoots });
  // A name that itself names a protected directory was judged as one by the check.
  if (what === undefined || /(^|\/)\.(git|forkloop|claude)(\/|$)/.test(absolute)) return undefined;
  return `${given} leads through a symlink to ${real}, inside ${what}, whose files can make git or forkloop run programs: give the real path, so the permission check judges it.`;
}
