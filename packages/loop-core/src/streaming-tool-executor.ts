import { onAbort } from "./abort-fan-out.js";
import { interruptedResult } from "./interrupted-result.js";
import type { ToolUseBlock } from "./messages.js";
import {
  INTERRUPTED_META,
  isConcurrencySafeCall,
  runToolUse,
  type ToolRunOptions,
  type ToolRunOutcome,
  toolResultMessage,
} from "./tool-execution.js";

/** R-T2: at most this many concurrency-safe tools run at once. */
const MAX_TOOL_CONCURRENCY = 10;

interface TrackedTool {
  readonly block: ToolUseBlock;
  readonly parentUuid: string | null;
  readonly safe: boolean;
  status: "queued" | "running" | "done";
  outcome: Promise<ToolRunOutcome> | undefined;
}

/**
 * R-T2 executor. Tools are added in call order; a concurrency-safe tool starts as soon as it is
 * added — while the model is still streaming, before `message_stop` — if everything running is
 * safe too; an unsafe tool waits for the end of the message and for the tools before it, and
 * runs alone. Results come out as the calls end, as Claude Code yields and prints them (R-K2): two
 * safe calls running together come out in whichever order they finish; an unsafe call, which
 * runs alone, keeps its place. The request puts them back in call order (api-messages.ts). On
 * abort, tools not yet started get a synthetic "interrupted" result at once and running ones are
 * answered without waiting (R-L16), so no tool_use is ever left unanswered (R-L12).
 */
export class StreamingToolExecutor {
  private readonly tools: TrackedTool[] = [];
  private streamEnded = false;
  private discarded = false;

  constructor(private readonly options: ToolRunOptions) {}

  get size(): number {
    return this.tools.length;
  }

  /** Adds a completed tool_use block (ignored if its id was already added). */
  addTool(block: ToolUseBlock, parentUuid: string | null): void {
    if (this.discarded || this.tools.some((tool) => tool.block.id === block.id)) return;
    this.tools.push({
      block,
      parentUuid,
      safe: isConcurrencySafeCall(this.options.context.tools, block),
      status: "queued",
      outcome: undefined,
    });
    this.processQueue();
  }

  /** The message is complete: unsafe tools may start now. */
  finishStream(): void {
    this.streamEnded = true;
    this.processQueue();
  }

  /**
   * R-L8: the attempt was abandoned (model fallback or a retried stream). Results of tools already
   * started are dropped; the caller answers their tool_use blocks itself.
   */
  discard(): void {
    this.discarded = true;
  }

  /** Every result as its call ends (ties in call order); waits for running tools. */
  async *results(): AsyncGenerator<ToolRunOutcome> {
    this.finishStream();
    const pending = [...this.tools];
    while (pending.length > 0) {
      if (this.discarded) return;
      this.processQueue();
      const started = pending.filter((tool) => tool.outcome !== undefined);
      if (started.length === 0) {
        // Only reachable when aborted before these tools could start.
        for (const tool of pending.splice(0)) yield this.interrupted(tool);
        return;
      }
      // One call running (the common turn): no race to set up, it is the one that ends.
      const ended =
        started.length === 1
          ? { tool: started[0]!, outcome: await (started[0]!.outcome as Promise<ToolRunOutcome>) }
          : await Promise.race(
              started.map((tool) =>
                (tool.outcome as Promise<ToolRunOutcome>).then((outcome) => ({ tool, outcome })),
              ),
            );
      pending.splice(pending.indexOf(ended.tool), 1);
      if (this.discarded) return;
      yield ended.outcome;
    }
  }

  private processQueue(): void {
    if (this.discarded) return;
    const signal = this.options.context.abortController.signal;
    for (const tool of this.tools) {
      if (tool.status !== "queued") continue;
      if (signal.aborted) return;
      const running = this.tools.filter((other) => other.status === "running");
      const canStart = tool.safe
        ? running.every((other) => other.safe) && running.length < MAX_TOOL_CONCURRENCY
        : this.streamEnded && running.length === 0;
      // Order is kept: nothing overtakes a tool that has to wait.
      if (!canStart) return;
      this.start(tool);
    }
  }

  private start(tool: TrackedTool): void {
    tool.status = "running";
    const signal = this.options.context.abortController.signal;
    const run = runToolUse(tool.block, tool.parentUuid, this.options);
    // One listener on the turn's signal for all running calls, not one each (abort-fan-out.ts).
    const aborted = new Promise<ToolRunOutcome>((resolve) => {
      const stop = onAbort(signal, () => resolve(this.interrupted(tool)));
      void run.finally(stop);
    });
    tool.outcome = Promise.race([run, aborted]).finally(() => {
      tool.status = "done";
      this.processQueue();
    });
  }

  private interrupted(tool: TrackedTool): ToolRunOutcome {
    return {
      message: toolResultMessage(
        tool.block.id,
        // A call that had started may have done part of its work: Claude Code says so (R-K2).
        interruptedResult(tool.status === "running"),
        tool.parentUuid,
        this.options.uuid(),
        INTERRUPTED_META,
      ),
    };
  }
}
