/**
 * The generated source tree the tools benchmarks search (20,000 files in 200 directories, one in
 * 50 holding the needle, plus 2,000 gitignored files a good walker never opens), and the bare
 * tool call they time.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type AgentState, createAgentState, type Tool, type ToolUseContext } from "@forkloop/loop-core";

export const DIRS = 200;
export const FILES_PER_DIR = 100;
export const IGNORED_FILES = 2_000;
export const LINES_PER_FILE = 30;

export function generateTree(root: string): void {
  writeFileSync(join(root, ".gitignore"), "node_modules/\n");
  for (let dir = 0; dir < DIRS; dir++) {
    const dirPath = join(root, "src", `module${dir}`);
    mkdirSync(dirPath, { recursive: true });
    for (let file = 0; file < FILES_PER_DIR; file++) {
      const lines: string[] = [];
      for (let line = 0; line < LINES_PER_FILE; line++) {
        lines.push(`export const value${line} = compute(${dir}, ${file}, ${line}); // plain line of code`);
      }
      // One file in 50 holds the needle, so files_with_matches returns 400 paths.
      if (file % 50 === 7) lines.splice(LINES_PER_FILE / 2, 0, "// MARK(needle): handle the edge case");
      writeFileSync(join(dirPath, `file${file}.ts`), `${lines.join("\n")}\n`);
    }
  }
  // Gitignored: a good walker never opens these.
  const ignored = join(root, "node_modules", "dep");
  mkdirSync(ignored, { recursive: true });
  for (let file = 0; file < IGNORED_FILES; file++)
    writeFileSync(join(ignored, `f${file}.js`), "needle needle\n");
}

export function contextFor(
  root: string,
  agentState: AgentState = createAgentState(),
): ToolUseContext & { toolUseId: string } {
  return {
    cwd: root,
    workspaceRoots: [root],
    tools: [],
    abortController: new AbortController(),
    agentId: "main",
    agentState,
    options: { model: "bench", permissionMode: "default" },
    toolUseId: "toolu_bench",
  };
}

export async function call(
  tool: Tool,
  input: Record<string, unknown>,
  context: ToolUseContext & { toolUseId: string },
) {
  const parsed = tool.inputSchema.parse(input);
  const result = await tool.call(parsed, context);
  if (result.isError === true) throw new Error(`${tool.name} failed: ${String(result.content)}`);
  return result;
}
