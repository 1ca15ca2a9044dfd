import { estimateMessageTokens, type Message } from "@forkloop/loop-core";
import { isSafeCut } from "./message-shape.js";

/**
 * Where the protected tail starts: the index of the first message kept verbatim when everything
 * before it is replaced (by a summary or nothing). The tail is the newest messages that fit in
 * `maxTokens`, then moved forward to a safe cut — just before an assistant message — so a
 * tool_use is never separated from its tool_result and every kept thinking block, including the
 * latest assistant turn's, goes back unmodified (R-L12, R-L17). If even the newest assistant
 * message does not fit, the tail starts at it anyway (it is the minimum valid tail). Returns 0
 * when the history has no safe cut: nothing may be replaced.
 */
export function protectedTailStart(messages: readonly Message[], maxTokens: number): number {
  let start = messages.length;
  let tokens = 0;
  while (start > 0) {
    const next = tokens + estimateMessageTokens(messages[start - 1]!);
    if (next > maxTokens) break;
    tokens = next;
    start--;
  }
  if (start === 0) return 0;
  for (let index = start; index < messages.length; index++) if (isSafeCut(messages, index)) return index;
  for (let index = start - 1; index > 0; index--) if (isSafeCut(messages, index)) return index;
  return 0;
}
