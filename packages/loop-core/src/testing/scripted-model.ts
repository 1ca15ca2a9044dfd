import { createApiErrorMessage, createAssistantMessage } from "../create-message.js";
import type { ApiMessage, ContentBlock, RawMessageStreamEvent } from "../messages.js";
import type { callModel, ModelCallRequest, ModelEvent } from "../model-client.js";

export type ScriptedBlock =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "tool_use";
      readonly name: string;
      readonly input: Record<string, unknown>;
      readonly id?: string;
    }
  | { readonly type: "thinking"; readonly thinking: string; readonly signature?: string };

export type ScriptedReply =
  | {
      readonly content: readonly ScriptedBlock[];
      readonly stop_reason?: "end_turn" | "tool_use" | "max_tokens";
      readonly usage?: { readonly input_tokens?: number; readonly output_tokens?: number };
    }
  | { readonly error: { readonly status: number | null; readonly type: string; readonly message: string } }
  | { readonly throw: Error };

/**
 * An in-process model client for unit tests and CPU benchmarks: replies come from a script (or a
 * function of the request) without HTTP. It emits the same event sequence as the real client —
 * stream events, `content_block_complete`, then the assistant message. Scenario tests use the
 * simulator instead; this double exists for pure loop-logic tests and for measuring loop CPU.
 */
export function scriptedCallModel(
  script: readonly ScriptedReply[] | ((request: ModelCallRequest, index: number) => ScriptedReply),
  options: { readonly emitStreamEvents?: boolean } = {},
): typeof callModel & { readonly requests: ModelCallRequest[] } {
  const requests: ModelCallRequest[] = [];
  let counter = 0;
  const fn = async function* (request: ModelCallRequest): AsyncGenerator<ModelEvent, void> {
    const index = requests.length;
    requests.push(request);
    const reply =
      typeof script === "function"
        ? script(request, index)
        : (script[index] ?? { error: { status: 500, type: "api_error", message: "script exhausted" } });
    if ("throw" in reply) throw reply.throw;
    if ("error" in reply) {
      yield createApiErrorMessage(reply.error, request.model, {
        uuid: request.assistantUuid ?? request.uuid(),
        parentUuid: request.parentUuid,
      });
      return;
    }
    const content: ContentBlock[] = reply.content.map((block) => {
      switch (block.type) {
        case "text":
          return { type: "text", text: block.text, citations: null };
        case "thinking":
          return { type: "thinking", thinking: block.thinking, signature: block.signature ?? "sig" };
        default:
          return {
            type: "tool_use",
            id: block.id ?? `toolu_scripted_${++counter}`,
            name: block.name,
            input: block.input,
            caller: { type: "direct" },
          } as ContentBlock;
      }
    });
    const stopReason =
      reply.stop_reason ?? (content.some((block) => block.type === "tool_use") ? "tool_use" : "end_turn");
    const message = {
      id: `msg_scripted_${index}`,
      type: "message",
      role: "assistant",
      model: request.model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      stop_details: null,
      container: null,
      diagnostics: null,
      usage: {
        input_tokens: reply.usage?.input_tokens ?? 10,
        output_tokens: reply.usage?.output_tokens ?? 10,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    } as unknown as ApiMessage;
    if (options.emitStreamEvents !== false) {
      const start = { type: "message_start", message: { ...message, content: [] } } as RawMessageStreamEvent;
      yield { type: "stream_event", event: start };
    }
    for (const block of content) yield { type: "content_block_complete", block };
    yield createAssistantMessage(message, {
      uuid: request.assistantUuid ?? request.uuid(),
      parentUuid: request.parentUuid,
    });
  };
  return Object.assign(fn, { requests });
}
