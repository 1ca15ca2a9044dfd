import type { ContextPipeline, ContextStageInput, ContextStageResult } from "../context-pipeline.js";
import { passthroughContextPipeline } from "../context-pipeline.js";
import { createSystemMessage, createUserMessage } from "../create-message.js";
import type { Message } from "../messages.js";

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
