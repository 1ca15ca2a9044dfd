import {
  type ApiRetryEvent,
  type AssistantMessage,
  type LoopEvent,
  type Message,
  MessageAccumulator,
  type Usage,
} from "@forkloop/loop-core";
import type { SubAgentIo } from "./sub-agent-io.js";
import type { TokenUsage } from "./sub-agent-types.js";

function toolResultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === "object" && "text" in part ? String(part.text) : ""))
      .join("");
  }
  return "";
}

function tokenUsage(usage: Usage): TokenUsage {
  return {
    input_tokens: usage.input_tokens,
    output_tokens: usage.output_tokens,
    cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
    cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
  };
}

/**
 * One sub-agent's loop events as the pool's progress events for the parent (text, tool calls and
 * results, usage, compactions, retries), each tagged with the sub-agent's id. Returns the
 * function the loop's events go through, in order.
 */
export function eventForwarder(agentId: string, io: Pick<SubAgentIo, "emit">): (event: LoopEvent) => void {
  // The reply being streamed, block by block: a tool call is announced the moment its block is
  // complete (R-K2: Claude Code's task_progress comes then, before the call's PreToolUse hook).
  // A new one per attempt: a retried stream starts again at message_start.
  let reply: MessageAccumulator | undefined;
  return (event) => {
    if (event.type === "stream_event") {
      const raw = event.event;
      if (raw.type === "message_start") reply = new MessageAccumulator();
      const completed = reply?.push(raw);
      if (completed?.type === "tool_use") {
        io.emit({
          type: "tool_use_ready",
          agentId,
          toolUseId: completed.id,
          name: completed.name,
          input: completed.input,
        });
      }
    }
    forwardEvent(agentId, event, io);
  };
}

function forwardEvent(agentId: string, event: LoopEvent, io: Pick<SubAgentIo, "emit">): void {
  switch (event.type) {
    case "stream_event": {
      const raw = event.event;
      if (raw.type === "message_start") {
        io.emit({ type: "usage", agentId, phase: "start", usage: tokenUsage(raw.message.usage) });
      } else if (raw.type === "content_block_delta" && raw.delta.type === "text_delta") {
        io.emit({ type: "text", agentId, text: raw.delta.text });
      }
      return;
    }
    case "assistant": {
      const message = event as AssistantMessage;
      if (message.apiError) return;
      for (const block of message.message.content) {
        if (block.type === "tool_use") {
          io.emit({ type: "tool_use", agentId, toolUseId: block.id, name: block.name, input: block.input });
        }
      }
      io.emit({
        type: "assistant_message",
        agentId,
        message: message.message,
        ...(message.requestId === undefined ? {} : { requestId: message.requestId }),
      });
      io.emit({ type: "usage", agentId, phase: "end", usage: tokenUsage(message.message.usage) });
      return;
    }
    case "user": {
      const message = event as Message & { type: "user" };
      const content = message.message.content;
      if (typeof content === "string") return;
      // A message holds one call's result and its meta (toolResultMessage); several are the loop's own.
      const meta = content.length === 1 ? message.toolResultMeta : undefined;
      for (const block of content) {
        if (block.type === "tool_result") {
          io.emit({
            type: "tool_result",
            agentId,
            toolUseId: block.tool_use_id,
            isError: block.is_error === true,
            ...(block.is_error === undefined ? {} : { errorStated: true as const }),
            content: toolResultText(block.content).slice(0, 2_000),
            ...(meta === undefined ? {} : { meta }),
          });
        }
      }
      return;
    }
    case "system": {
      const message = event as Message & { type: "system" };
      if (message.subtype === "compact_boundary" && message.compactMetadata) {
        io.emit({
          type: "compact_boundary",
          agentId,
          trigger: message.compactMetadata.trigger,
          preTokens: message.compactMetadata.preTokens,
          postTokens: message.compactMetadata.postTokens,
        });
      }
      return;
    }
    case "api_retry": {
      const retry = event as ApiRetryEvent;
      io.emit({
        type: "api_retry",
        agentId,
        attempt: retry.attempt,
        maxRetries: retry.maxRetries,
        delayMs: retry.delayMs,
        error: retry.error,
        ...(retry.resumesAt === undefined ? {} : { resumesAt: retry.resumesAt }),
      });
      return;
    }
    default:
      return;
  }
}
