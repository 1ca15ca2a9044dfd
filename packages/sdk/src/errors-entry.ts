/**
 * `@forkloop/sdk/errors`: the errors a caller can fix and the words for file-system failures,
 * loadable without the rest of the SDK (the CLI's start and `@forkloop/batch` use it).
 * `describeError`, which reads the orchestrator's errors too, is in the SDK's index.
 */
export { capitalize, errnoFix, errnoReason } from "./errno-text.js";
export { OptionsError } from "./options-error.js";
