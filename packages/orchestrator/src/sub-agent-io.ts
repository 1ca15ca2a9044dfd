import type Anthropic from "@anthropic-ai/sdk";
import type {
  BeforeSend,
  CanUseTool,
  LoopHooks,
  QueuedCommand,
  RetryClock,
  RetryOptions,
} from "@forkloop/loop-core";
import type { ParentToolResult, SubAgentEvent } from "./sub-agent-types.js";
import type { TelemetrySink } from "./telemetry/spans.js";

/** What the runner needs from its host (a worker thread, or the parent process in tests). */
export interface SubAgentIo {
  readonly client: Anthropic;
  /** Retries and deadlines of every model request (the endpoint's `retry`). */
  readonly retry?: RetryOptions;
  /**
   * R-B1: awaited before every model request of the sub-agent (turns, tool summaries,
   * compact forks) is sent — in a worker, the pool-wide 429 pause and the parent's request gate.
   */
  readonly beforeSend?: BeforeSend;
  /** R-R11: the clock the model client's waits run on (default the system clock). */
  readonly clock?: RetryClock;
  readonly signal: AbortSignal;
  emit(event: SubAgentEvent): void;
  /** Asks the parent (over comlink in a worker); undefined = nobody can grant an `ask`. */
  readonly askParent?: CanUseTool;
  /** Loop hooks (in a worker: proxies that run the parent's hooks over comlink). */
  readonly hooks?: LoopHooks;
  /** Runs a parent-side tool (an MCP tool, a nested `Agent` call) in the parent. */
  callParentTool(
    toolName: string,
    input: Record<string, unknown>,
    options: { toolUseId: string; agentId: string },
  ): Promise<ParentToolResult>;
  /**
   * Steering from the parent: the loop drains this array between tool turns (R-L2), so a steer
   * joins the next request; what is left when the loop stops starts one more turn.
   */
  readonly steeringQueue: QueuedCommand[];
  /** True when the parent asked to cancel (the signal is aborted too). */
  cancelled(): boolean;
  /** R-V5: where the sub-agent's spans and metrics go; undefined when telemetry is off. */
  readonly telemetry?: TelemetrySink;
  /** Subscribes to the host's 429 pauses (the worker's fetch sees them), for the transcript. */
  onRateLimited?(listener: (pause: RateLimitPause) => void): void;
}

/** A 429 that paused the pool: when, for how long, until when (epoch ms). */
export interface RateLimitPause {
  readonly at: number;
  readonly retryAfterMs: number;
  readonly until: number;
}
