/**
 * `@forkloop/sdk/errors`: the errors a caller can fix and the words for file-system failures,
 * loadable without the rest of the SDK (the CLI's error path and `@forkloop/batch` use it).
 */
export { capitalize, errnoFix, errnoReason, isKnownErrno } from "./errno-text.js";
export { OptionsError } from "./options-error.js";
