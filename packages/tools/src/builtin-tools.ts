import type { Tool } from "@forkloop/loop-core";
import { createBashTool } from "./tools/bash.js";
import { editTool } from "./tools/edit.js";
import { globTool } from "./tools/glob.js";
import { createGrepTool, type GrepToolOptions } from "./tools/grep.js";
import { lsTool } from "./tools/ls.js";
import { readTool } from "./tools/read.js";
import { todoWriteTool } from "./tools/todo-write.js";
import { writeTool } from "./tools/write.js";

export interface BuiltinToolsOptions {
  readonly bashDefaultTimeoutMs?: number;
  readonly grepBackend?: GrepToolOptions["backend"];
}

/**
 * The coding tools of R-T3, named exactly as Claude Code's so that settings rules such as
 * `Bash(npm test:*)` and hook matchers such as `Edit|Write` carry over. The order is stable: the
 * tool list is part of the prompt-cache key (R-F3).
 */
export function createBuiltinTools(options: BuiltinToolsOptions = {}): Tool[] {
  const bashOptions =
    options.bashDefaultTimeoutMs === undefined ? {} : { defaultTimeoutMs: options.bashDefaultTimeoutMs };
  const grepOptions = options.grepBackend === undefined ? {} : { backend: options.grepBackend };
  return [
    readTool,
    writeTool,
    editTool,
    globTool,
    createGrepTool(grepOptions),
    lsTool,
    createBashTool(bashOptions),
    todoWriteTool,
  ];
}
