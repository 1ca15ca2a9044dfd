import type { AssistantMessage, Message } from "./messages.js";

/**
 * Classification of assistant messages that R-L9 withholds. Claude Code matches the error
 * wording the same way (api doc §4: "prompt is too long: N tokens > M maximum").
 */
function isPromptTooLong(message: AssistantMessage): boolean {
  if (!message.apiError) return false;
  return /prompt is too long/i.test(message.apiError.message);
}

/**
 * Oversized or unreadable images and documents (R-L6 `image_error`), and a request over the API's
 * size limit (413 request_too_large: 32 MB, which images and documents are what usually fill),
 * as Claude Code 2.1.332 ends on it (claude-cli scenario api-error-too-large).
 */
function isMediaError(message: AssistantMessage): boolean {
  const error = message.apiError;
  if (error?.status === 413) return true;
  if (error?.status !== 400) return false;
  return (
    /image|media|pdf|document/i.test(error.message) &&
    /exceed|too large|size|invalid|could not/i.test(error.message)
  );
}

/** A real reply cut at the output cap. */
function isMaxOutputTokens(message: AssistantMessage): boolean {
  return !message.apiError && message.message.stop_reason === "max_tokens";
}

/** The kinds of reply R-L9 withholds; each has its own recovery ladder and guards (R-L10). */
export type WithheldKind = "prompt_too_long" | "media" | "max_output_tokens";

/** Which withheld kind `message` is, or undefined when it is shown as it arrives. */
export function withheldKind(message: AssistantMessage): WithheldKind | undefined {
  if (isPromptTooLong(message)) return "prompt_too_long";
  if (isMediaError(message)) return "media";
  if (isMaxOutputTokens(message)) return "max_output_tokens";
  return undefined;
}

export function lastAssistant(messages: readonly Message[]): AssistantMessage | undefined {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index];
    if (message?.type === "assistant") return message;
  }
  return undefined;
}
