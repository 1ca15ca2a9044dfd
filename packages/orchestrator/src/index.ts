export {
  type AgentContextOptions,
  type AgentSessionMemory,
  createAgentContextPipeline,
  meteredCompactRunner,
} from "./agent-context.js";
export {
  type AgentDefinition,
  GENERAL_PURPOSE_AGENT,
  type LoadedAgentDefinitions,
  loadAgentDefinitions,
  loadAgentDefinitionsDetailed,
  parseAgentDefinition,
} from "./agent-definitions.js";
export {
  type AgentPool,
  type AgentPoolOptions,
  createAgentPool,
  type ParentToolHandler,
  type RunAllOptions,
  responseStarted,
} from "./agent-pool.js";
export {
  type AgentLimits,
  type AgentProfile,
  type AgentProfileFields,
  agentProfile,
  withProfile,
} from "./agent-profile.js";
/** The hook event a sub-agent opens with: what a host waits for before its first message. */
export { openingEvent } from "./agent-runner.js";
export { createAgentTool } from "./agent-tool.js";
export {
  API_KEY_HELPER_TIMEOUT_MS,
  type ApiKeyHelper,
  ApiKeyHelperError,
  apiKeyFromHelper,
} from "./api-key-helper.js";
export {
  OrchestratorError,
  type OrchestratorErrorCode,
  type WireError,
} from "./errors.js";
export { type ForkOptions, fork } from "./fork.js";
export { buildForkDirective, toForkHistory } from "./fork-messages.js";
export { type ForkToolOptions, forkToolResult, type ModelRequestDefaults } from "./fork-tool-support.js";
export { type GitSnapshot, type GitStatus, readGitSnapshot } from "./git-status.js";
export {
  createSession,
  type MainSession,
  type MainSessionOptions,
  type SessionCompactResult,
  type SessionRunOptions,
} from "./main-session.js";
export {
  type MemoryFile,
  type MemoryFilesRead,
  readMemoryFilesDetailed,
} from "./memory-files.js";
export { modelClientOptions } from "./model-client-options.js";
export { detachedParentTools, parentToolAnnotations, parentToolHandler } from "./parent-tool-calls.js";
export { poolClock, type SharedClock, skipAheadClock, skippedMs } from "./pool-clock.js";
export { createPoolCompactRunner } from "./pool-compact-runner.js";
export { type AssembledSession, type AssembleSessionOptions, assembleSession } from "./session-assembly.js";
export { listSessions, type SessionSummary } from "./session-list.js";
export { createSkillTool } from "./skill-tool.js";
export { type LoadedSkills, loadSkillsDetailed, type Skill } from "./skills.js";
export { buildSubAgentTask, type SubAgentTaskSpec } from "./sub-agent-task.js";
export { defaultSubAgentTools, selectSubAgentTools } from "./sub-agent-tool-selection.js";
export type {
  CompactionRecord,
  ModelEndpoint,
  ModelTransport,
  ParentCallbacks,
  PermissionRules,
  RequestGate,
  SubAgentBashOptions,
  SubAgentEvent,
  SubAgentHandle,
  SubAgentResult,
  SubAgentStatus,
  SubAgentTask,
  TokenUsage,
  TransportedRequest,
  TransportedResponse,
} from "./sub-agent-types.js";
export {
  type ContextLimits,
  type LoadedTranscript,
  loadIntactTranscript,
  loadTranscript,
  type ReadTranscript,
  readTranscript,
  repairTranscript,
  sessionTranscriptPath,
  subAgentTranscriptPath,
  TRANSCRIPT_EXTENSION,
  TRANSCRIPT_FORMAT,
  type TranscriptDamageData,
  type TranscriptRecord,
  TranscriptWriter,
  type TranscriptWriterOptions,
} from "./transcript.js";
export { TranscriptFold } from "./transcript-fold.js";
export { contextLimitsFor, TranscriptTiming, type TranscriptTimingOptions } from "./transcript-timing.js";
export { endpointWebSearcher, withWebSearcher } from "./web-searcher.js";
