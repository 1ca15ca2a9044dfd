import type { ContextPipeline, ContextStageInput, ContextStageResult } from "../context-pipeline.js";
import { passthroughContextPipeline } from "../context-pipeline.js";
import { createSystemMessage, createUserMessage } from "../create-message.js";
import type { ContentBlockParam, Message } from "../messages.js";
import { estimateMessageTokens, tokenCountWithEstimation } from "../token-estimation.js";

/** Keeps only the last user message (a stand-in for a compaction that worked). */
export function shrinkToLastUser(input: ContextStageInput): ContextStageResult {
  const lastUser = [...input.messages].reverse().find((message) => message.type === "user");
  const messages: Message[] = [
    createSystemMessage("compacted", "compact_boundary"),
    createUserMessage("Summary of the earlier conversation: the user asked for a task."),
    ...(lastUser && !isBig(lastUser) ? [lastUser] : []),
  ];
  return { messages, boundaries: [], tokensFreed: 1_000, tracking: { ...input.tracking, compacted: true } };
}

function isBig(message: Message): boolean {
  return JSON.stringify(message).length > 2_000;
}

/** A pipeline that records the order its stages run in, and can override a few of them. */
export function recordingPipeline(
  overrides: Partial<ContextPipeline> = {},
): ContextPipeline & { log: string[] } {
  const log: string[] = [];
  const base = { ...passthroughContextPipeline, ...overrides };
  const record = <T>(stage: string, run: () => T): T => {
    log.push(stage);
    return run();
  };
  return {
    log,
    budgetAndSnip: (input) => record("budgetAndSnip", () => base.budgetAndSnip(input)),
    microcompact: (input) => record("microcompact", () => base.microcompact(input)),
    collapse: (input) => record("collapse", () => base.collapse(input)),
    autocompact: (input) => record("autocompact", () => base.autocompact(input)),
    drainCollapse: (input) => record("drainCollapse", () => base.drainCollapse(input)),
    reactiveCompact: (input) => record("reactiveCompact", () => base.reactiveCompact(input)),
  };
}

/**
 * A pipeline whose budgetAndSnip replaces the first user message with a marker and, like the
 * compaction package's pipeline (R-C8), remembers the corrected count of the array it returned:
 * the last response's usage still describes the history before the snip.
 */
export function snippingPipeline(): ContextPipeline & {
  readonly tokenCount: (m: readonly Message[]) => number;
} {
  const corrected = new WeakMap<readonly Message[], number>();
  return {
    ...passthroughContextPipeline,
    budgetAndSnip(input) {
      const [first, ...rest] = input.messages;
      if (first?.type !== "user")
        return { messages: input.messages, boundaries: [], tokensFreed: 0, tracking: input.tracking };
      const messages = [createUserMessage("[earlier messages snipped]"), ...rest];
      corrected.set(
        messages,
        messages.reduce((sum, message) => sum + estimateMessageTokens(message), 0),
      );
      return {
        messages,
        boundaries: [],
        tokensFreed: estimateMessageTokens(first),
        tracking: input.tracking,
      };
    },
    tokenCount: (messages) => corrected.get(messages) ?? tokenCountWithEstimation(messages),
  };
}

/** An image block the API (and the simulator) rejects: more than 5 MB once decoded. */
export function oversizedImage(): ContentBlockParam {
  return {
    type: "image",
    source: { type: "base64", media_type: "image/png", data: "A".repeat(7_100_000) },
  } as ContentBlockParam;
}

/** The message with its image blocks replaced by a text note (a stand-in for a media fix). */
export function withoutImages(message: Message): Message {
  if (message.type !== "user" || typeof message.message.content === "string") return message;
  const content = message.message.content.map((block) =>
    block.type === "image" ? ({ type: "text", text: "[image removed]" } as ContentBlockParam) : block,
  );
  return { ...message, message: { ...message.message, content } };
}
