export type {
  BackgroundRunEnd,
  BackgroundShellInfo,
  BackgroundShellStart,
  BackgroundShellStatus,
  BackgroundTaskEvent,
  BackgroundTaskKind,
  BackgroundTaskNotice,
} from "./background/background-shells.js";
export {
  BackgroundShells,
  backgroundShellsFor,
  forwardTaskNotices,
  runningBackgroundTasks,
  runningShellsNote,
  taskNotificationText,
} from "./background/background-shells.js";
export type { BuiltinToolsOptions } from "./builtin-tools.js";
export { createBuiltinTools } from "./builtin-tools.js";
export type { GitHead, GitRepository } from "./git/git-repository.js";
export { findGitRepository, headName, readGitHead } from "./git/git-repository.js";
export type { HardenedGitOptions, HardenedGitRun } from "./git/hardened-git.js";
export { hardenedGitEnvironment, withHardenedGit } from "./git/hardened-git.js";
export type { JsGrepBackendOptions } from "./grep/js-backend.js";
export { createJsGrepBackend, jsGrepBackend } from "./grep/js-backend.js";
export { createRipgrepBackend, findRipgrep } from "./grep/ripgrep-backend.js";
export type { GrepBackend, GrepFileResult, GrepLine, GrepOutcome, GrepSearch } from "./grep/search.js";
export { compileMatcher } from "./hooks/hook-matcher.js";
export { hookTextForModel } from "./hooks/hook-output-file.js";
export type {
  HookCommandResult,
  HookEventInput,
  HookEventOutcome,
  HookRunObserver,
  HookRunReport,
  PermissionRequestHookDecision,
  StopFailureKind,
} from "./hooks/run-hook-event.js";
export { runHookEvent, stopFailureKind } from "./hooks/run-hook-event.js";
export type { HookNotice, SessionEventHooks, SettingsHooksOptions } from "./hooks/settings-hooks.js";
export {
  createSessionEventHooks,
  createSettingsHooks,
  mergeHooks,
  withToolMatcher,
} from "./hooks/settings-hooks.js";
export type { GitignoreVerdict, LinearIgnore, LinearIgnoreOptions } from "./patterns/linear-gitignore.js";
export { linearIgnore } from "./patterns/linear-gitignore.js";
export type { CompiledRegex, LinearRegex, LinearRegexOptions, RegexEngine } from "./patterns/linear-regex.js";
export { linearRegexEngine } from "./patterns/linear-regex.js";
export type { DeniedPathsOption } from "./permissions/denied-paths.js";
export type {
  PermissionCheckerOptions,
  PermissionDenial,
  PermissionRules,
} from "./permissions/permission-checker.js";
export { createPermissionChecker, unapprovedCallMessage } from "./permissions/permission-checker.js";
export type { PermissionModeFacts } from "./permissions/permission-modes.js";
export {
  isPermissionMode,
  PERMISSION_MODES,
  permissionModeFacts,
} from "./permissions/permission-modes.js";
export type { PermissionRule, RuleSpecifier } from "./permissions/permission-rules.js";
export { parsePermissionRule } from "./permissions/permission-rules.js";
export { mcpServerPrefix, toolNameMatches } from "./permissions/tool-name-patterns.js";
export {
  type CustomCommand,
  type CustomCommandLookup,
  customCommandPrompt,
  findCustomCommand,
} from "./project-files/custom-commands.js";
export type { ProjectFileRead, ProjectFileRules } from "./project-files/read-project-file.js";
export {
  CONFIG_FILE_MAX_BYTES,
  INSTRUCTION_FILE_MAX_BYTES,
  readProjectFile,
} from "./project-files/read-project-file.js";
export type { BubblewrapProbe, SandboxMode, SandboxPlan, SandboxPolicy } from "./sandbox/bubblewrap.js";
export {
  findBubblewrap,
  probeBubblewrap,
  SANDBOX_PROCESS_LIMIT,
  sandboxArgs,
} from "./sandbox/bubblewrap.js";
export type { HeldPoint, HeldPoints } from "./sandbox/held-points.js";
export { forkloopUserDir, heldPoints } from "./sandbox/held-points.js";
export type { LoadSettingsOptions, LoadSettingsResult, SettingSource } from "./settings/load-settings.js";
export { loadSettings, SETTING_SOURCES, settingsFilePaths } from "./settings/load-settings.js";
export { isProjectTrusted, trustProjectDirectory } from "./settings/project-trust.js";
export type {
  HookCommandSetting,
  HookEvent,
  HookMatcherSetting,
  HookSettings,
  Settings,
} from "./settings/settings-schema.js";
export { CLAUDE_CODE_HOOK_EVENTS, EMPTY_SETTINGS, HOOK_EVENTS } from "./settings/settings-schema.js";
export { terminalStream, terminalText, unescapedStream } from "./terminal-text.js";
export { looksBinary } from "./text-file.js";
export { toolEnvironment } from "./tool-environment.js";
export type { BashToolOptions } from "./tools/bash.js";
export { bashTool, createBashTool } from "./tools/bash.js";
export { editTool } from "./tools/edit.js";
export { createGlobTool, globTool } from "./tools/glob.js";
export type { GrepToolOptions } from "./tools/grep.js";
export { createGrepTool, grepTool } from "./tools/grep.js";
export { createLsTool, lsTool } from "./tools/ls.js";
export { readTool } from "./tools/read.js";
export { taskStopTool } from "./tools/task-stop.js";
export { todoWriteTool } from "./tools/todo-write.js";
export type { WebSearcher, WebSearchRequest } from "./tools/web-search.js";
export { createWebSearchTool } from "./tools/web-search.js";
export { writeTool } from "./tools/write.js";
export type { ResolvedPath, WorkspaceLocation } from "./workspace-paths.js";
export { isInside, realpathAllowingMissing, resolveInWorkspace } from "./workspace-paths.js";
