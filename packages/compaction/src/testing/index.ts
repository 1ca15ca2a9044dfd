import {
  type AssistantMessage,
  type ContentBlock,
  estimateMessageTokens,
  type Message,
  type Usage,
  type UserMessage,
} from "@forkloop/loop-core";
import type { CompactRequest, CompactRunner, CompactRunResult } from "../compact-conversation.js";
import type { MessageFactory } from "../message-shape.js";

/** Deterministic uuids and clock for tests: `m1`, `m2`, … */
export function createCountingFactory(prefix = "m"): MessageFactory {
  let next = 0;
  return { uuid: () => `${prefix}${++next}`, now: () => "2026-01-01T00:00:00.000Z" };
}

export interface HistoryBuilder {
  readonly messages: Message[];
  /** A human turn. */
  user(text: string): UserMessage;
  /** One tool round: an assistant tool_use and the user tool_result that answers it. */
  toolCall(
    name: string,
    input: Record<string, unknown>,
    result: string,
    options?: { readonly isError?: boolean; readonly thinking?: string },
  ): { readonly use: AssistantMessage; readonly result: UserMessage; readonly toolUseId: string };
  /** An assistant reply without tools (ends the trajectory). */
  answer(text: string, options?: { readonly thinking?: string }): AssistantMessage;
}

/**
 * Builds histories for tests. Each assistant message carries a usage equal to the estimate of
 * everything before it (input) and of itself (output), as if the API had counted it, so R-C8
 * counts on built histories behave like counts on real ones.
 */
export function createHistory(factory: MessageFactory = createCountingFactory()): HistoryBuilder {
  const messages: Message[] = [];
  let toolIds = 0;
  /** Estimated tokens of `messages` so far: the next assistant message's input usage. */
  let counted = 0;
  const parent = (): string | null => messages.at(-1)?.uuid ?? null;
  const push = (message: Message): void => {
    messages.push(message);
    counted += estimateMessageTokens(message);
  };

  function assistant(content: ContentBlock[], stop: "end_turn" | "tool_use"): AssistantMessage {
    const uuid = factory.uuid();
    const draft: AssistantMessage = {
      type: "assistant",
      uuid,
      parentUuid: parent(),
      timestamp: factory.now(),
      message: {
        id: `msg_${uuid}`,
        type: "message",
        role: "assistant",
        model: "test-model",
        content,
        stop_reason: stop,
        stop_sequence: null,
        usage: {
          input_tokens: 0,
          output_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
        },
      } as unknown as AssistantMessage["message"],
    };
    const usage = {
      ...draft.message.usage,
      input_tokens: counted,
      output_tokens: estimateMessageTokens(draft),
    };
    const message: AssistantMessage = { ...draft, message: { ...draft.message, usage } };
    push(message);
    return message;
  }

  function thinkingBlocks(thinking: string | undefined): ContentBlock[] {
    return thinking === undefined
      ? []
      : [{ type: "thinking", thinking, signature: `sig-${thinking.length}` }];
  }

  return {
    messages,
    user(text) {
      const message: UserMessage = {
        type: "user",
        uuid: factory.uuid(),
        parentUuid: parent(),
        timestamp: factory.now(),
        message: { role: "user", content: text },
      };
      push(message);
      return message;
    },
    toolCall(name, input, result, options = {}) {
      const toolUseId = `toolu_${String(++toolIds).padStart(4, "0")}`;
      const use = assistant(
        [
          ...thinkingBlocks(options.thinking),
          { type: "tool_use", id: toolUseId, name, input } as ContentBlock,
        ],
        "tool_use",
      );
      const answer: UserMessage = {
        type: "user",
        uuid: factory.uuid(),
        parentUuid: use.uuid,
        timestamp: factory.now(),
        message: {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: toolUseId,
              content: result,
              ...(options.isError ? { is_error: true } : {}),
            },
          ],
        },
      };
      push(answer);
      return { use, result: answer, toolUseId };
    },
    answer(text, options = {}) {
      return assistant(
        [...thinkingBlocks(options.thinking), { type: "text", text, citations: null } as ContentBlock],
        "end_turn",
      );
    },
  };
}

/** A runner that answers from a script (strings are summaries, `Error`s are failures) and records requests. */
export function createScriptedCompactRunner(
  script: readonly (string | Error | ((request: CompactRequest) => string | Error))[],
): CompactRunner & { readonly requests: CompactRequest[] } {
  const requests: CompactRequest[] = [];
  const runner = async (request: CompactRequest): Promise<CompactRunResult> => {
    requests.push(request);
    const step = script[Math.min(requests.length - 1, script.length - 1)];
    const reply = typeof step === "function" ? step(request) : step;
    if (reply === undefined) return { ok: false, error: "script exhausted" };
    if (reply instanceof Error) return { ok: false, error: reply.message };
    return {
      ok: true,
      summary: reply,
      usage: { input_tokens: 0, output_tokens: 0 } as Usage,
    };
  };
  return Object.assign(runner, { requests });
}
export {
  createScriptedAgent,
  createWorkTool,
  mainAgentParams,
  type ScriptedAgent,
} from "./scripted-session.js";
export { withSummarizer } from "./summarizer-brain.js";
