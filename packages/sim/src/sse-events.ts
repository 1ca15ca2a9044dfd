import type { BuiltReply, ResponseBlock } from "./build-reply.js";
import type { Diagnostics } from "./cache-diagnostics.js";
import type { AppliedEdit } from "./context-edits-schema.js";
import { inputJson } from "./hostile-reply.js";
import { countTokens, splitByTokens } from "./tokenizer.js";
import type { SimUsage } from "./types.js";

/** One server-sent event, with the output tokens it carries (for the latency model's pacing). */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
  tokens: number;
}

export interface MessageHeader {
  id: string;
  model: string;
  /** Present when the request opted in with `diagnostics`. */
  diagnostics: Diagnostics | null;
  /** Beta: the applied context edits, when the request carried `context_management` (api doc §9). */
  contextManagement: { applied_edits: AppliedEdit[] } | null;
}

/** Tokens per text/thinking delta: small enough to look like a stream, large enough to be cheap. */
const TOKENS_PER_DELTA = 8;
/**
 * A text block longer than this (the huge_block fault's megabytes) streams in deltas of this many
 * characters, paced at about 4 characters a token: splitting and counting megabytes by tokens
 * would hold the simulator's thread for seconds.
 */
const BULK_DELTA_CHARS = 64 * 1024;

/**
 * The event sequence of a streamed reply (api doc §3): message_start, ping, per block
 * content_block_start → deltas → content_block_stop, message_delta (cumulative usage), message_stop.
 */
export function replyEvents(header: MessageHeader, reply: BuiltReply, usage: SimUsage): SseEvent[] {
  const events: SseEvent[] = [];
  const inputUsage = {
    input_tokens: usage.input_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens,
    cache_read_input_tokens: usage.cache_read_input_tokens,
    cache_creation: usage.cache_creation,
  };
  events.push(
    ev("message_start", {
      message: {
        id: header.id,
        type: "message",
        role: "assistant",
        content: [],
        model: header.model,
        stop_reason: null,
        stop_sequence: null,
        diagnostics: header.diagnostics,
        usage: { ...inputUsage, output_tokens: 1, service_tier: "standard" },
      },
    }),
  );
  events.push(ev("ping", {}));
  reply.content.forEach((block, index) => {
    events.push(...blockEvents(block, index));
  });
  events.push(
    ev("message_delta", {
      delta: {
        stop_reason: reply.stopReason,
        stop_sequence: reply.stopSequence,
        stop_details: reply.stopDetails ?? null,
      },
      // The cumulative usage, with the response's server tool counts (the SDK copies it over).
      usage: {
        ...inputUsage,
        output_tokens: usage.output_tokens,
        ...(usage.server_tool_use ? { server_tool_use: usage.server_tool_use } : {}),
      },
      // SDK 1.14's BetaRawMessageDeltaEvent carries it; BetaMessageStream copies it to the message.
      ...(header.contextManagement ? { context_management: header.contextManagement } : {}),
    }),
  );
  events.push(ev("message_stop", {}));
  return events;
}

function blockEvents(block: ResponseBlock, index: number): SseEvent[] {
  const stop = ev("content_block_stop", { index });
  switch (block.type) {
    case "text":
      return [
        ev("content_block_start", { index, content_block: { type: "text", text: "" } }),
        // Citations stream as citations_delta events (streaming page); the SDK collects them.
        ...(block.citations ?? []).map((citation) =>
          ev("content_block_delta", { index, delta: { type: "citations_delta", citation } }),
        ),
        ...textDeltas(block.text).map(([text, tokens]) =>
          ev("content_block_delta", { index, delta: { type: "text_delta", text } }, tokens),
        ),
        stop,
      ];
    case "thinking": {
      // With display "omitted" the signature is the only delta (api doc §3).
      const deltas =
        block.thinking === ""
          ? []
          : splitByTokens(block.thinking, TOKENS_PER_DELTA).map((thinking) =>
              ev(
                "content_block_delta",
                { index, delta: { type: "thinking_delta", thinking } },
                countTokens(thinking),
              ),
            );
      return [
        ev("content_block_start", {
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
        ...deltas,
        ev("content_block_delta", { index, delta: { type: "signature_delta", signature: block.signature } }),
        stop,
      ];
    }
    case "web_search_tool_result":
    case "web_fetch_tool_result":
    case "code_execution_tool_result":
    case "bash_code_execution_tool_result":
    case "text_editor_code_execution_tool_result":
      // A server tool's result arrives whole in its content_block_start (web search page).
      return [ev("content_block_start", { index, content_block: block }), stop];
    case "tool_use":
    case "server_tool_use":
      // Both start with input {} and stream the input as JSON text (api doc §3).
      return [
        ev("content_block_start", { index, content_block: { ...block, input: {} } }),
        ...jsonFragments(inputJson(block.input)).map((partial_json) =>
          ev(
            "content_block_delta",
            { index, delta: { type: "input_json_delta", partial_json } },
            countTokens(partial_json),
          ),
        ),
        stop,
      ];
  }
}

/** A text block's deltas with their tokens: about TOKENS_PER_DELTA tokens each, or bulk pieces. */
function textDeltas(text: string): [text: string, tokens: number][] {
  if (text.length <= BULK_DELTA_CHARS) {
    return splitByTokens(text, TOKENS_PER_DELTA).map((piece) => [piece, countTokens(piece)]);
  }
  const pieces: [string, number][] = [];
  for (let at = 0; at < text.length; at += BULK_DELTA_CHARS) {
    const piece = text.slice(at, at + BULK_DELTA_CHARS);
    pieces.push([piece, Math.ceil(piece.length / 4)]);
  }
  return pieces;
}

/** Splits tool input JSON into at least two fragments, as the API streams it. */
function jsonFragments(json: string): string[] {
  const count = Math.max(2, Math.ceil(json.length / 64));
  const size = Math.ceil(json.length / count);
  const out: string[] = [];
  for (let i = 0; i < json.length; i += size) out.push(json.slice(i, i + size));
  while (out.length < 2) out.push("");
  return out;
}

function ev(event: string, payload: Record<string, unknown>, tokens = 0): SseEvent {
  return { event, data: { type: event, ...payload }, tokens };
}

/** The wire form of one event: an `event:` line and a `data:` line (the SDK drops data without event). */
export function formatEvent(e: { event: string; data: unknown }): string {
  return `event: ${e.event}\ndata: ${JSON.stringify(e.data)}\n\n`;
}
