export type { BashToolOptions } from "./tools/bash.js";
export { bashTool, createBashTool } from "./tools/bash.js";
export { editTool } from "./tools/edit.js";
export { readTool } from "./tools/read.js";
export { writeTool } from "./tools/write.js";
export type { ResolvedPath, WorkspaceLocation } from "./workspace-paths.js";
export { resolveInWorkspace } from "./workspace-paths.js";
