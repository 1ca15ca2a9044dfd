import type Anthropic from "@anthropic-ai/sdk";
import { createUserMessage } from "./create-message.js";
import type { AssistantMessage, Usage, UserMessage } from "./messages.js";
import type { BeforeSend, callModel as realCallModel } from "./model-client.js";

const TOOL_USE_SUMMARY_QUERY_SOURCE = "tool_use_summary";

export interface ToolUseSummaryEvent {
  readonly type: "tool_use_summary";
  readonly summary: string;
  readonly precedingToolUseIds: string[];
}

/**
 * R-L18: a one-line summary of the tool calls just made, from a small model, started in the
 * background after tool execution and awaited during the next iteration (so it overlaps the next
 * stream). Failures resolve to null: a summary is decoration, never a reason to stop.
 */
export async function generateToolUseSummary(input: {
  readonly callModel: typeof realCallModel;
  readonly client: Anthropic | undefined;
  /** R-B1: the run's pre-send gate; a summary request passes it too. */
  readonly beforeSend?: BeforeSend | undefined;
  readonly model: string;
  readonly assistants: readonly AssistantMessage[];
  readonly results: readonly UserMessage[];
  readonly signal: AbortSignal;
  readonly uuid: () => string;
  /** Called with the summary request's usage: the loop adds it to what the run cost (R-L18). */
  readonly onUsage?: (usage: Usage) => void;
}): Promise<ToolUseSummaryEvent | null> {
  const calls = input.assistants.flatMap((assistant) =>
    assistant.message.content.flatMap((block) => (block.type === "tool_use" ? [block] : [])),
  );
  if (calls.length === 0) return null;
  const described = calls
    .map((call) => `- ${call.name}(${JSON.stringify(call.input).slice(0, 300)})`)
    .join("\n");
  try {
    let summary = "";
    for await (const event of input.callModel({
      client: input.client,
      model: input.model,
      systemPrompt: "You label tool activity for a progress display. Reply with one short line, no preamble.",
      tools: [],
      messages: [createUserMessage(`Summarize these tool calls in under 12 words:\n${described}`)],
      maxOutputTokens: 100,
      querySource: TOOL_USE_SUMMARY_QUERY_SOURCE,
      signal: input.signal,
      fallbackAvailable: false,
      retry: { maxRetries: 0 },
      beforeSend: input.beforeSend,
      parentUuid: null,
      uuid: input.uuid,
    })) {
      if (event.type === "assistant" && !event.apiError) {
        input.onUsage?.(event.message.usage);
        summary = event.message.content
          .flatMap((block) => (block.type === "text" ? [block.text] : []))
          .join("");
      }
    }
    if (summary.trim().length === 0) return null;
    return {
      type: "tool_use_summary",
      summary: summary.trim(),
      precedingToolUseIds: calls.map((call) => call.id),
    };
  } catch {
    return null;
  }
}
