import { createHash } from "node:crypto";
import type { MessagesRequest } from "./request-schema.js";
import { signThinking } from "./thinking-signature.js";
import { countTokens, truncateToTokens } from "./tokenizer.js";
import type {
  BrainReply,
  Citation,
  RefusalStopDetails,
  ReplyBlock,
  ServerToolResultType,
  StopReason,
} from "./types.js";

/** A response content block as the API returns it (api doc §2). */
export type ResponseBlock =
  /** No `citations` key without citations, as the API sends it (the AI SDK rejects `citations: null`). */
  | { type: "text"; text: string; citations?: readonly Citation[] }
  | { type: "thinking"; thinking: string; signature: string }
  | {
      type: "tool_use";
      id: string;
      name: string;
      input: Record<string, unknown>;
      caller: { type: "direct" };
    }
  | { type: "server_tool_use"; id: string; name: string; input: Record<string, unknown> }
  | {
      type: ServerToolResultType;
      tool_use_id: string;
      content: unknown;
      caller: { type: "direct" };
    };

/** The API's stop reasons the simulator can produce (the brain's, plus the window limit). */
export type ReplyStopReason = StopReason | "model_context_window_exceeded";

export interface BuiltReply {
  content: ResponseBlock[];
  stopReason: ReplyStopReason;
  /** The stop sequence that ended the reply, when stopReason is "stop_sequence". */
  stopSequence: string | null;
  outputTokens: number;
  /** `stop_details`: set for a refusal (handling stop reasons page), else null. */
  stopDetails?: RefusalStopDetails | null;
}

export interface BuildOptions {
  body: MessagesRequest;
  seed: number;
  /** Digest of the request, so generated tool ids are the same for the same request and seed. */
  requestDigest: string;
  /** The `max_tokens` fault: cut the reply to about half its tokens. */
  cut: boolean;
  /** Output tokens left in the context window after the prompt (no limit when absent). */
  contextRoom?: number;
  /** The model's tokens per simulator token (ModelSpec.tokenFactor). */
  tokenFactor?: number;
  /** `tool_choice` forced this reply's tool call (reply-constraints.ts): no thinking block. */
  forcedToolUse?: boolean;
  /** The model's `thinking.display` when the request names none (the model table). */
  displayDefault?: "summarized" | "omitted";
}

/** Text of the simulated thinking block used when thinking is on and the brain gave none. */
const DEFAULT_THINKING = "Simulated thinking: the simulator picks its reply by rule; there is no model here.";

/** Turns a brain's reply into the API's content, honouring thinking config and max_tokens. */
export function buildReply(reply: BrainReply, options: BuildOptions): BuiltReply {
  const { body } = options;
  const thinking = body.thinking;
  // A forced tool call skips thinking: the response starts with the tool call (api doc §8).
  const thinkingOn =
    (thinking?.type === "enabled" || (thinking?.type === "adaptive" && reply.adaptiveThinking !== false)) &&
    options.forcedToolUse !== true;
  // Opus 4.7 and later return thinking "omitted" unless asked for "summarized" (adaptive thinking
  // page); "updates" keeps the reasoning hidden too (R-D2).
  const display = (thinking as { display?: string | null } | undefined)?.display ?? options.displayDefault;
  const omitted = thinkingOn && (display === "omitted" || display === "updates");
  let blocks: ReplyBlock[] = reply.content.filter((b) => b.type !== "thinking" || thinkingOn);
  if (thinkingOn && !blocks.some((b) => b.type === "thinking")) {
    blocks = [{ type: "thinking", thinking: DEFAULT_THINKING }, ...blocks];
  }
  // Thinking is billed in full even when its text is not returned (api doc §8).
  let content: ResponseBlock[] = blocks.map((block, i) => toResponseBlock(block, i, options, omitted));
  const stopped = applyStopSequences(content, body.stop_sequences ?? []);
  if (stopped) {
    content = stopped.content;
    blocks = blocks.slice(0, content.length);
  }
  const cost = content.map((block, i) => blockOutputTokens(block, blocks[i]));
  const total = cost.reduce((a, b) => a + b, 0);
  let stopReason: ReplyStopReason = stopped
    ? "stop_sequence"
    : (reply.stop_reason ?? (content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn"));
  const room = Math.max(1, options.contextRoom ?? Number.POSITIVE_INFINITY);
  // Output that would run past the context window stops there, before max_tokens (api doc §2).
  const windowBound = room < options.body.max_tokens;
  // Costs are in simulator tokens; the model's limits convert to them by its token factor.
  const factor = options.tokenFactor ?? 1;
  const billed = (tokens: number) => Math.max(1, Math.ceil(tokens * factor));
  const limit = options.cut
    ? Math.max(1, Math.floor(total / 2))
    : Math.floor(Math.min(options.body.max_tokens, room) / factor);
  if (total <= limit) {
    return {
      content,
      stopReason,
      stopSequence: stopped?.sequence ?? null,
      outputTokens: billed(total),
      stopDetails: stopReason === "refusal" ? refusalDetails(reply) : null,
    };
  }

  // Over the budget: keep whole blocks while they fit, cut text at the limit, drop the rest.
  stopReason = windowBound && !options.cut ? "model_context_window_exceeded" : "max_tokens";
  const kept: ResponseBlock[] = [];
  let used = 0;
  for (const [i, block] of content.entries()) {
    const blockCost = cost[i] ?? 0;
    if (used + blockCost <= limit) {
      kept.push(block);
      used += blockCost;
      continue;
    }
    if (block.type === "text") {
      const text = truncateToTokens(block.text, limit - used);
      if (text.length > 0) {
        kept.push({ ...block, text });
        used += countTokens(text);
      }
    }
    break;
  }
  return { content: kept, stopReason, stopSequence: null, outputTokens: billed(used) };
}

/**
 * Cuts the reply at the earliest stop sequence found in a text block (the sequence itself is not
 * returned); later blocks are dropped. Null when no sequence occurs.
 */
function applyStopSequences(
  content: readonly ResponseBlock[],
  sequences: readonly string[],
): { content: ResponseBlock[]; sequence: string } | null {
  if (sequences.length === 0) return null;
  for (const [i, block] of content.entries()) {
    if (block.type !== "text") continue;
    let at = -1;
    let sequence = "";
    for (const s of sequences) {
      const found = s === "" ? -1 : block.text.indexOf(s);
      if (found >= 0 && (at < 0 || found < at)) {
        at = found;
        sequence = s;
      }
    }
    if (at >= 0) {
      const cut: ResponseBlock[] = [...content.slice(0, i)];
      if (at > 0) cut.push({ ...block, text: block.text.slice(0, at) });
      return { content: cut, sequence };
    }
  }
  return null;
}

function refusalDetails(reply: BrainReply): RefusalStopDetails {
  return {
    type: "refusal",
    category: reply.refusal?.category ?? null,
    explanation: reply.refusal?.explanation ?? null,
  };
}

function toResponseBlock(
  block: ReplyBlock,
  index: number,
  options: BuildOptions,
  omitted: boolean,
): ResponseBlock {
  switch (block.type) {
    case "text":
      return block.citations?.length
        ? { type: "text", text: block.text, citations: block.citations }
        : { type: "text", text: block.text };
    case "web_search_tool_result":
    case "web_fetch_tool_result":
    case "code_execution_tool_result":
    case "bash_code_execution_tool_result":
    case "text_editor_code_execution_tool_result":
      return {
        type: block.type,
        tool_use_id: block.tool_use_id,
        content: block.content,
        caller: { type: "direct" },
      };
    case "thinking":
      return {
        type: "thinking",
        thinking: omitted ? "" : block.thinking,
        signature: signThinking(omitted ? "" : block.thinking),
      };
    case "tool_use":
      return {
        type: "tool_use",
        id: block.id ?? toolUseId(options, index),
        name: block.name,
        input: block.input,
        caller: { type: "direct" },
      };
    case "server_tool_use":
      return {
        type: "server_tool_use",
        id: block.id ?? toolUseId(options, index, "srvtoolu_01"),
        name: block.name,
        input: block.input,
      };
  }
}

function blockOutputTokens(block: ResponseBlock, source: ReplyBlock | undefined): number {
  switch (block.type) {
    case "text":
      return countTokens(block.text);
    case "thinking":
      return countTokens(source?.type === "thinking" ? source.thinking : block.thinking);
    case "tool_use":
    case "server_tool_use":
      return countTokens(block.name) + countTokens(JSON.stringify(block.input));
    case "web_search_tool_result":
    case "web_fetch_tool_result":
    case "code_execution_tool_result":
    case "bash_code_execution_tool_result":
    case "text_editor_code_execution_tool_result":
      // The server tool's result is the server's, not the model's output.
      return 0;
  }
}

function toolUseId(options: BuildOptions, index: number, prefix = "toolu_01"): string {
  const digest = createHash("sha256")
    .update(`${options.seed}:${options.requestDigest}:${index}`)
    .digest("hex");
  return `${prefix}${digest.slice(0, 22)}`;
}
