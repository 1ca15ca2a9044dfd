export type { BuiltinToolsOptions } from "./builtin-tools.js";
export { createBuiltinTools } from "./builtin-tools.js";
export { FILE_TYPES } from "./grep/file-types.js";
export { jsGrepBackend } from "./grep/js-backend.js";
export { createRipgrepBackend, findRipgrep } from "./grep/ripgrep-backend.js";
export type { GrepBackend, GrepFileResult, GrepLine, GrepOutcome, GrepSearch } from "./grep/search.js";
export type {
  PermissionCheckerOptions,
  PermissionDenial,
  PermissionRules,
} from "./permissions/permission-checker.js";
export { createPermissionChecker } from "./permissions/permission-checker.js";
export type { PermissionRule, RuleSpecifier } from "./permissions/permission-rules.js";
export { parsePermissionRule } from "./permissions/permission-rules.js";
export type { BashToolOptions } from "./tools/bash.js";
export { bashTool, createBashTool } from "./tools/bash.js";
export { editTool } from "./tools/edit.js";
export { globTool } from "./tools/glob.js";
export type { GrepToolOptions } from "./tools/grep.js";
export { createGrepTool, grepTool } from "./tools/grep.js";
export { lsTool } from "./tools/ls.js";
export { readTool } from "./tools/read.js";
export { todoWriteTool } from "./tools/todo-write.js";
export { writeTool } from "./tools/write.js";
export type { ResolvedPath, WorkspaceLocation } from "./workspace-paths.js";
export { resolveInWorkspace } from "./workspace-paths.js";
