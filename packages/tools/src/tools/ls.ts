import { readdir } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { GitignoreFilter } from "../gitignore.js";
import { compileGlobs } from "../patterns/linear-glob.js";
import { type DeniedPathsOption, deniedPathFilters } from "../permissions/denied-paths.js";
import { absolutePath, defineTool, isDirectory, toolError } from "../tool-kit.js";
import { resolveInWorkspace } from "../workspace-paths.js";

const LS_MAX_ENTRIES = 1000;

const lsInput = lazySchema(() =>
  z.object({
    path: z.string().describe("The directory to list (absolute, or relative to the working directory)"),
    ignore: z.array(z.string()).optional().describe('Glob patterns to skip, e.g. ["*.log", "dist"]'),
  }),
);

export function createLsTool(options: DeniedPathsOption = {}) {
  const deniedFor = deniedPathFilters("LS", options);
  return defineTool({
    name: "LS",
    description:
      "Lists a directory of the workspace as a tree (recursively, directories marked with a trailing /). Skips " +
      `hidden and gitignored entries, and entries matching the optional ignore globs. At most ${LS_MAX_ENTRIES} entries.`,
    inputSchema: lsInput,
    isConcurrencySafe: () => true,
    isReadOnly: () => true,
    maxResultSizeChars: 100_000,
    backfillInput: (input, context) => ({ ...input, path: absolutePath(input.path, context.cwd) }),
    async call(input, context) {
      const resolved = resolveInWorkspace(input.path, context);
      if (!resolved.ok) return toolError(resolved.error);
      const root = resolved.path;
      if (!(await isDirectory(root))) return toolError(`${root} is not a directory.`);

      const filter = GitignoreFilter.forSearch(root, context.workspaceRoots);
      // The model's globs, matched in linear time (R-S12).
      const ignored = compileGlobs(input.ignore ?? [], { basename: true });
      if (!ignored.ok) return toolError(`ignore: ${ignored.error}`);
      const skip = (path: string) => ignored.glob.matches(path.split(sep).join("/"));
      const denied = deniedFor(context.cwd);
      const lines: string[] = [`- ${root}${sep}`];
      let entries = 0;
      let truncated = false;

      const visit = async (dir: string, depth: number): Promise<void> => {
        const children = await readdir(dir, { withFileTypes: true }).catch(() => []);
        children.sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
        for (const child of children) {
          if (truncated || context.abortController.signal.aborted) return;
          const path = join(dir, child.name);
          const isDirectory = child.isDirectory();
          const hidden = child.name.startsWith(".") || skip(relative(root, path));
          if (hidden || filter.isIgnored(path, isDirectory) || denied?.(path) === true) continue;
          if (entries >= LS_MAX_ENTRIES) {
            truncated = true;
            return;
          }
          entries++;
          lines.push(`${"  ".repeat(depth)}- ${child.name}${isDirectory ? sep : ""}`);
          if (isDirectory) await visit(path, depth + 1);
        }
      };
      await visit(root, 1);

      const listing = lines.join("\n");
      if (!truncated) return { content: listing };
      return {
        content:
          `There are more than ${LS_MAX_ENTRIES} entries under ${root}. Use LS on a subdirectory, or Glob and Grep, ` +
          `to explore further. The first ${LS_MAX_ENTRIES} are included below:\n\n${listing}`,
      };
    },
  });
}

export const lsTool = createLsTool();
