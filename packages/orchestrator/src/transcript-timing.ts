import { thresholdsFor } from "@forkloop/compaction";
import type { AssistantMessage, LoopEvent, LoopHooks, ModelInfo, PreToolUseInput } from "@forkloop/loop-core";
import type { ContextLimits, TranscriptRecord } from "./transcript.js";

type RequestRecord = Extract<TranscriptRecord, { type: "request" }>;
type Retry = RequestRecord["retries"][number];

export interface TranscriptTimingOptions {
  readonly append: (record: TranscriptRecord) => void;
  /** The reply's cost, priced as the loop prices it (model overrides included). */
  readonly costOf?: (message: AssistantMessage) => number;
  readonly now?: () => Date;
}

/**
 * What a transcript records beside the messages so a report can draw a run's timeline
 * (R-V1): one `request` record per model request (start, first token, end, retries, how it
 * ended) and a `tool_started` record per tool call (its end is the tool_result message's
 * timestamp). It only observes the loop's events: nothing here changes what the loop does.
 */
export class TranscriptTiming {
  readonly #append: (record: TranscriptRecord) => void;
  readonly #costOf: ((message: AssistantMessage) => number) | undefined;
  readonly #now: () => Date;
  #open:
    | {
        model: string;
        querySource: string;
        startedAt: string;
        firstTokenAt?: string;
        retries: Retry[];
      }
    | undefined;

  constructor(options: TranscriptTimingOptions) {
    this.#append = options.append;
    this.#costOf = options.costOf;
    this.#now = options.now ?? (() => new Date());
  }

  /** Feed every loop event, in order. */
  observe(event: LoopEvent): void {
    switch (event.type) {
      case "request_start":
        // A request that yielded no reply before the next one started: its reply was withheld
        // (R-L9 recovery) and replaced by the next attempt.
        this.#close("withheld");
        this.#open = {
          model: event.model,
          querySource: event.querySource,
          startedAt: this.#at(),
          retries: [],
        };
        return;
      case "stream_event":
        if (this.#open && this.#open.firstTokenAt === undefined && event.event.type === "content_block_delta")
          this.#open.firstTokenAt = this.#at();
        return;
      case "api_retry":
        this.#open?.retries.push({
          at: this.#at(),
          attempt: event.attempt,
          delayMs: event.delayMs,
          error: event.error,
        });
        // A retried stream starts over: its first token is the new stream's.
        if (this.#open) delete this.#open.firstTokenAt;
        return;
      case "model_fallback":
        this.#close("fallback", { fallbackTo: event.to });
        return;
      case "assistant": {
        const message = event as AssistantMessage;
        this.#close(message.apiError ? "api_error" : "reply", {
          messageUuid: message.uuid,
          ...(message.apiError || this.#costOf === undefined ? {} : { costUsd: this.#costOf(message) }),
        });
        return;
      }
      default:
        return;
    }
  }

  /** The loop ended: a request still open was cut off (an interrupt or a crash of the client). */
  finish(): void {
    this.#close("aborted");
  }

  /** A PreToolUse hook that stamps each tool call's start; it has no opinion on the call. */
  toolHook(): (input: PreToolUseInput) => Promise<Record<string, never>> {
    return async (input) => {
      this.#append({
        type: "tool_started",
        toolUseId: input.toolUseId,
        name: input.toolName,
        at: this.#at(),
      });
      return {};
    };
  }

  /** `hooks` with the start stamp first, so a blocking hook after it still leaves a start. */
  withToolHook(hooks: LoopHooks | undefined): LoopHooks {
    return { ...hooks, preToolUse: [this.toolHook(), ...(hooks?.preToolUse ?? [])] };
  }

  #close(outcome: RequestRecord["outcome"], extra: Partial<RequestRecord> = {}): void {
    const open = this.#open;
    if (!open) return;
    this.#open = undefined;
    this.#append({ type: "request", ...open, endedAt: this.#at(), outcome, ...extra });
  }

  #at(): string {
    return this.#now().toISOString();
  }
}

/** R-C7's lines for `model`, as a transcript's `session_start` records them. */
export function contextLimitsFor(model: ModelInfo, autoCompactWindow?: number): ContextLimits {
  const { contextWindow, autoCompact, blockingLimit } = thresholdsFor(model, autoCompactWindow);
  return { contextWindow, autoCompact, blockingLimit };
}
