/**
 * `@forkloop/sdk`: forkloop as a library. What makes a run behave like `claude -p` — settings
 * files and their rules and hooks, the headless permission policy, the endpoint (a real one, or
 * the embedded simulator, announced), and the stream-json messages — above the orchestrator.
 */
// Endpoint resolution, the models file, the fault spec and OptionsError (also a light subpath).

export { createHeadlessPermissions } from "./headless-permissions.js";
export * from "./model-endpoint-entry.js";
export { type RunSession, type RunSessionOptions, startRunSession } from "./run-session.js";
export { loadRunSettings, mergeRules, settingsHooks, toolHooks } from "./settings.js";
export { batchesDir, checkId, sessionsDir, stateDir } from "./state-dirs.js";
export {
  apiRetryLineSchema,
  assistantLineSchema,
  compactBoundaryLineSchema,
  modelFallbackLineSchema,
  type ResultLine,
  resultLineSchema,
  resultSubtypeSchema,
  type StreamJsonLine,
  streamEventLineSchema,
  streamJsonLineSchema,
  systemInitLineSchema,
  tombstoneLineSchema,
  userLineSchema,
} from "./stream-json.js";
export { type PermissionDenialRecord, StreamJsonWriter } from "./stream-json-writer.js";
export { builtinToolNames, DEFAULT_MODEL, type PermissionRules, selectTools } from "./tool-selection.js";
export { FORKLOOP_VERSION } from "./version.js";
