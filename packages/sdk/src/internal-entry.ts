/**
 * `@forkloop/sdk/internal`: plumbing shared with `@forkloop/batch` and the CLI — a prompt's custom
 * slash command expanded (R-X1), what an endpoint failure (R-R9) and a run's result say to the
 * user, in the CLI's words. Not API.
 */
export { jsonSchemaFlag, textFileFlag } from "./claude-flag-values.js";
export {
  type ClaudeFlags,
  checkClaudeFlagValues,
  claudeFlagOptions,
  mcpConfigFlag,
  worktreeBaseFlag,
} from "./claude-flags.js";
export { type ExpandedCommand, expandSlashCommand } from "./custom-slash-command.js";
export {
  describeEndpointFailure,
  describeHostFailure,
  type EndpointContext,
  type EndpointFailure,
  endpointUrl,
} from "./endpoint-failure.js";
export { CLI_AGENT_WORDS, withMainAgent } from "./main-agent.js";
export {
  errorSentence,
  jsonResult,
  limitStop,
  loopReason,
  type RunResultContext,
  rateLimitPauseLine,
  resultText,
  runEndpointFailure,
  verboseLine,
  withoutWrittenAt,
} from "./run-result-text.js";
