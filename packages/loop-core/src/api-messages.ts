import type { ContentBlock, ContentBlockParam, Message, MessageParam } from "./messages.js";

export interface ToApiMessagesOptions {
  /**
   * R-L17: thinking blocks may only go to a request with thinking enabled. When false they are
   * dropped from every assistant turn. Default true (keep them unmodified).
   */
  readonly thinkingEnabled?: boolean;
  /**
   * R-X1: the model takes mid-conversation `role: "system"` messages (model table): a
   * `model_context` marker is sent as one, as Claude Code sends it (the API wants it right after a
   * user turn and before an assistant turn: one before a user turn moves past it). Otherwise its
   * text joins the user turn before it. Default false.
   */
  readonly systemMessages?: boolean;
}

/**
 * History → API `messages`. Drops system markers and API-error stand-ins (never model output),
 * merges consecutive same-role turns (parallel tool results arrive as separate user messages;
 * the API wants one turn) with the tool results in the order of the calls they answer (they are
 * kept as each call ends, R-T2; a live and a resumed request are the same bytes), keeps thinking blocks byte-for-byte (the API rejects a modified
 * thinking block in the latest assistant turn, R-L17) but never as the last block of a turn.
 */
export function toApiMessages(
  messages: readonly Message[],
  options: ToApiMessagesOptions = {},
): MessageParam[] {
  const thinkingEnabled = options.thinkingEnabled ?? true;
  // This runs over the whole history for every request: one pass, no copies of turns or blocks
  // beyond the request's own, and the system-message pass only when there is one.
  const result: Turn[] = [];
  let previous: Turn | undefined;
  let systemTurns = false;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.type === "system") {
      if (message.subtype !== "model_context" || message.content === "") continue;
      const text: ContentBlockParam = { type: "text", text: message.content };
      if (previous?.role === "system") previous.content.push(text);
      else {
        previous = { role: previous?.role === "user" ? "system" : "user", content: [text] };
        if (previous.role === "system") systemTurns = true;
        result.push(previous);
      }
      continue;
    }
    if (message.type === "user") {
      const content = message.message.content;
      if (previous?.role === "user") {
        if (typeof content === "string") previous.content.push({ type: "text", text: content });
        else for (let block = 0; block < content.length; block++) previous.content.push(content[block]!);
      } else {
        previous = {
          role: "user",
          content: typeof content === "string" ? [{ type: "text", text: content }] : content.slice(),
        };
        result.push(previous);
      }
      continue;
    }
    if (message.apiError) continue;
    let blocks: ContentBlockParam[];
    if (previous?.role === "assistant") blocks = previous.content;
    else {
      blocks = [];
      previous = { role: "assistant", content: blocks };
      result.push(previous);
    }
    const content = message.message.content;
    for (let block = 0; block < content.length; block++) {
      const next = content[block]!;
      if (!thinkingEnabled && (next.type === "thinking" || next.type === "redacted_thinking")) continue;
      blocks.push(toBlockParam(next));
    }
  }
  // A system message stands only after a user turn and before an assistant turn (or last). One
  // followed by a user turn moves past it, as Claude Code 2.1.332 sends a compaction's SessionStart
  // context after the next prompt (claude-cli scenario hooks-compact-context), joining a system
  // turn there; for a model without them its text joins the user turn before it.
  for (let index = systemTurns ? result.length - 1 : -1; index >= 0; index--) {
    const turn = result[index]!;
    if (turn.role !== "system") continue;
    const next = result[index + 1];
    if (options.systemMessages === true) {
      if (next === undefined || next.role === "assistant") continue;
      const after = result[index + 2];
      if (after?.role === "system") after.content.unshift(...turn.content);
      else result.splice(index + 2, 0, turn);
      result.splice(index, 1);
      continue;
    }
    result[index - 1]?.content.push(...turn.content);
    result.splice(index, 1);
  }
  // The turns become the request's messages as they are ({ role, content }): no copy of each.
  const apiMessages: Turn[] = [];
  let last: Turn | undefined;
  for (let index = 0; index < result.length; index++) {
    const turn = result[index]!;
    if (turn.role === "user" && index > 0 && result[index - 1]!.role === "assistant")
      inCallOrder(turn.content, result[index - 1]!.content);
    if (turn.role === "assistant") {
      // R-L17: a thinking block is never the last block of an assistant turn (a reply cut at
      // max_tokens mid-thought would otherwise end in one and the API rejects it).
      while (isThinking(turn.content.at(-1))) turn.content.pop();
    }
    // An empty turn (e.g. an assistant reply that was only a cut thought) is invalid on the wire.
    if (turn.content.length === 0) continue;
    if (last !== undefined && last.role === turn.role) {
      for (const block of turn.content) last.content.push(block);
    } else {
      last = turn;
      apiMessages.push(turn);
    }
  }
  return apiMessages as MessageParam[];
}

/** A turn being built: a request message, or a `system` one (R-X1) that may still fold away. */
interface Turn {
  role: "user" | "assistant" | "system";
  content: ContentBlockParam[];
}

/** Puts a user turn's tool_result blocks, in their own places, in the order of the calls before. */
function inCallOrder(blocks: ContentBlockParam[], calls: readonly ContentBlockParam[]): void {
  const places: number[] = [];
  for (let index = 0; index < blocks.length; index++)
    if (blocks[index]!.type === "tool_result") places.push(index);
  // Most turns answer one call or none: nothing to order, and no map of the calls to build
  // (this runs for every turn of the history on every request).
  if (places.length < 2) return;
  const callIndex = new Map<string, number>();
  for (const call of calls) if (call.type === "tool_use") callIndex.set(call.id, callIndex.size);
  const rank = (block: ContentBlockParam): number =>
    block.type === "tool_result" ? (callIndex.get(block.tool_use_id) ?? callIndex.size) : callIndex.size;
  const sorted = places.map((place) => blocks[place]!).sort((a, b) => rank(a) - rank(b));
  for (const [index, place] of places.entries()) blocks[place] = sorted[index]!;
}

function isThinking(block: ContentBlockParam | undefined): boolean {
  return block?.type === "thinking" || block?.type === "redacted_thinking";
}

/** A response block in request form: only the fields the request schema accepts. */
function toBlockParam(block: ContentBlock): ContentBlockParam {
  switch (block.type) {
    case "text":
      return block.citations && block.citations.length > 0
        ? ({ type: "text", text: block.text, citations: block.citations } as ContentBlockParam)
        : { type: "text", text: block.text };
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data };
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    default:
      return block as unknown as ContentBlockParam;
  }
}
