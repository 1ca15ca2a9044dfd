import type { SDKMessage } from "./messages.js";

/**
 * When the Agent SDK hands a system or result message to the program, it says when in
 * `written_at` (an ISO time); assistant and user messages carry their own `timestamp`, stream
 * events neither. Claude Code's stream-json has no `written_at`, so `forkloop run` prints
 * messages without it.
 */
export function withWrittenAt(message: SDKMessage, now = new Date()): SDKMessage {
  if (message.type !== "system" && message.type !== "result") return message;
  return Object.assign({ ...message }, { written_at: now.toISOString() });
}
