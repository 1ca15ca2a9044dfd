export type { ApiError, ApiErrorType } from "./api-error.js";
export { type BatchScript, parseBatchScript } from "./batch-script.js";
export type { BatchOptions } from "./batches.js";
export { builtinPolicyBrain } from "./brains/builtin-policy.js";
export { NoMatchingRuleError, scriptedBrain } from "./brains/scripted.js";
export type { FaultKind, FaultRequest, FaultSpec, RandomFaults, ScheduledFault } from "./faults.js";
export { FaultSpecError, parseFaultSpec } from "./faults.js";
export type { FileOptions } from "./files.js";
export type { LatencyModel, ModelTiming } from "./latency.js";
export { REALISTIC_LATENCY } from "./latency.js";
export type { ModelSpec } from "./model-registry.js";
export { MODELS, ModelRegistry, resolveModel } from "./model-registry.js";
export { DEFAULT_RATE_LIMITS, parseRateLimitSpec, type RateLimits } from "./rate-limiter.js";
export type { MessagesRequest } from "./request-schema.js";
export type { Scenario, ScenarioRule } from "./scenario.js";
export { loadScenario, parseScenario, ScenarioError } from "./scenario.js";
export { startSimulator } from "./server.js";
export { countTokens } from "./tokenizer.js";
export type {
  Brain,
  BrainReply,
  BrainRequest,
  ReplyBlock,
  RequestRecord,
  SimUsage,
  Simulator,
  SimulatorOptions,
  StopReason,
} from "./types.js";
