import { type RequestBody, userText } from "./conversation-text.js";

/**
 * Who a request to the scripted server speaks for. The two sides send different numbers of
 * requests in different orders (Claude Code's side calls, retries, a sub-agent's requests
 * interleaved with its parent's), so requests are matched by role, never by position.
 * - `main`: the program's own conversation; `turn` counts its assistant messages so far.
 * - `sub-agent`: the conversation of a task the main conversation handed to a sub-agent — a
 *   request holding one of the script's task texts in a user message's own text (the parent
 *   holds it only in its tool call's input); `turn` counts the assistant messages after it.
 * - `side`: a request with no tools (a title, a summary, a classifier).
 */
export type RequestRole =
  | { kind: "main"; turn: number }
  | { kind: "sub-agent"; task: string; turn: number }
  | { kind: "side" };

export function roleOf(body: RequestBody, tasks: readonly string[]): RequestRole {
  if ((body.tools ?? []).length === 0) return { kind: "side" };
  const messages = body.messages;
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role !== "user") continue;
    const text = userText(message.content);
    const task = tasks.find((candidate) => text.includes(candidate));
    if (task !== undefined) {
      return {
        kind: "sub-agent",
        task,
        turn: messages.slice(i + 1).filter((m) => m.role === "assistant").length,
      };
    }
  }
  return { kind: "main", turn: messages.filter((m) => m.role === "assistant").length };
}

export function roleName(role: RequestRole): string {
  return role.kind === "sub-agent" ? `sub-agent "${role.task}"` : role.kind;
}
