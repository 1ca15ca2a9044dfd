import { isAbsolute, join, relative, sep } from "node:path";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { walkFiles } from "../file-walker.js";
import { GitignoreFilter } from "../gitignore.js";
import { globScope } from "../patterns/glob-scope.js";
import { compileGlob } from "../patterns/linear-glob.js";
import { type DeniedPathsOption, deniedPathFilters } from "../permissions/denied-paths.js";
import { absolutePath, defineTool, isDirectory, sortNewestFirst, toolError } from "../tool-kit.js";
import { isInside, resolveInWorkspace } from "../workspace-paths.js";

export const GLOB_MAX_RESULTS = 100;

const globInput = lazySchema(() =>
  z.object({
    pattern: z.string().min(1).describe("The glob pattern to match files against"),
    path: z.string().optional().describe("The directory to search in (default: the working directory)"),
  }),
);

export function createGlobTool(options: DeniedPathsOption = {}) {
  const deniedFor = deniedPathFilters("Glob", options);
  return defineTool({
    name: "Glob",
    description:
      'Finds files by glob pattern (e.g. "**/*.ts", "src/**/*.{js,jsx}") under a directory of the workspace. ' +
      `Respects .gitignore. Returns absolute paths, most recently modified first, at most ${GLOB_MAX_RESULTS}.`,
    inputSchema: globInput,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 100_000,
    backfillInput: (input, context) =>
      input.path === undefined ? input : { ...input, path: absolutePath(input.path, context.cwd) },
    async call(input, context) {
      const resolved = resolveInWorkspace(input.path ?? context.cwd, context);
      if (!resolved.ok) return toolError(resolved.error);
      const dir = resolved.path;
      if (!(await isDirectory(dir))) return toolError(`${dir} is not a directory.`);

      let pattern = input.pattern;
      if (isAbsolute(pattern)) {
        if (!isInside(pattern, dir))
          return toolError(`The pattern ${pattern} is not under the search directory ${dir}.`);
        pattern = relative(dir, pattern) || ".";
      }
      // "../**" would walk out of the search directory (and the workspace).
      if (pattern.split("/").includes("..")) {
        return toolError('Glob patterns may not contain ".." segments; pass a different path instead.');
      }

      // The model's glob, matched on RE2 in linear time (R-S12).
      const compiled = compileGlob(pattern);
      if (!compiled.ok) return toolError(compiled.error);
      const matcher = compiled.glob;
      const filter = GitignoreFilter.forSearch(dir, context.workspaceRoots);
      const { base, maxDepth } = globScope(pattern);
      const start = join(dir, base);
      const depthBelowStart = (path: string) => relative(start, path).split(sep).length;
      // Gitignored directories (and .git) are never walked, nor directories deeper than a match can be.
      const { files: found } = await walkFiles(start, {
        filter,
        signal: context.abortController.signal,
        decide: (path, isDirectory) => {
          if (isDirectory) return depthBelowStart(path) < maxDepth ? undefined : false;
          return matcher.matches(relative(dir, path).split(sep).join("/")) ? undefined : false;
        },
      });
      // The walk does not follow symlinks, but an explicit "link/*" starts in one: re-check each hit's real path (R-P1).
      const denied = deniedFor(context.cwd);
      const kept = found.filter(
        (path) =>
          isInside(path, dir) &&
          !filter.isIgnored(path, false) &&
          resolveInWorkspace(path, context).ok &&
          denied?.(path) !== true,
      );
      if (kept.length === 0) return { content: "No files found" };

      // Newest first, as Claude Code's Glob: the files being worked on come up top.
      const sorted = await sortNewestFirst(kept);
      const shown = sorted.slice(0, GLOB_MAX_RESULTS);
      const note =
        sorted.length > GLOB_MAX_RESULTS
          ? `\n(Results are truncated: showing ${GLOB_MAX_RESULTS} of ${sorted.length}. Use a more specific path or pattern.)`
          : "";
      return { content: shown.join("\n") + note };
    },
  });
}

export const globTool = createGlobTool();
