import type { MessagePort } from "node:worker_threads";
import type { PermissionDecision } from "@forkloop/loop-core";
import type { Endpoint } from "comlink";
import type { HookCall, HookCounts, HookOutcome } from "./parent-hooks.js";
import type { SharedClock } from "./pool-clock.js";
import type {
  ModelEndpoint,
  ParentToolResult,
  SubAgentEvent,
  SubAgentTask,
  TransportedResponse,
} from "./sub-agent-types.js";

/**
 * Parent ↔ worker protocol of one sub-agent (R-F2). Three transferred MessagePorts per task:
 * - `control`: the worker exposes `WorkerControlApi` over comlink (cancel, steer);
 * - `callbacks`: the parent exposes `ParentApi` over comlink (permission asks, parent-side tools);
 * - `events`: plain postMessage of `SubAgentEvent`s (structured clone is the cheapest encoding
 *   inside one process; there is nothing to answer).
 * Two comlink channels, not one: a port that both exposes and wraps would make comlink's expose
 * answer the other side's replies.
 */
export interface WorkerTaskPayload {
  readonly task: SubAgentTask;
  readonly endpoint: ModelEndpoint;
  readonly control: MessagePort;
  readonly callbacks: MessagePort;
  readonly events: MessagePort;
  /** Pool-wide pause: a BigInt64 epoch-ms shared by every worker (`pauseUntil`, 429s). */
  readonly pauseBuffer: SharedArrayBuffer;
  /** R-R11: the pool's clock when it is not the system clock (a test's skip-ahead clock). */
  readonly clock?: SharedClock;
  /** Whether the parent gates each request (`ParentCallbacks.requestSlot`, R-B1). */
  readonly requestGated: boolean;
  /** Whether the parent carries the model requests (`ParentApi.sendModelRequest`, R-B8). */
  readonly modelTransported?: boolean;
  /** Whether the parent has a canUseTool to ask; without one, `ask` is a denial. */
  readonly parentCanAsk: boolean;
  /** The parent's loop hooks, by kind (each runs in the parent over `callbacks`). */
  readonly parentHooks: HookCounts;
}

export interface WorkerControlApi {
  cancel(reason: string): void;
  steer(text: string): void;
}

/**
 * A permission ask and a hook call say how many events the worker sent before them
 * (`eventsSent`): they come over `callbacks`, the events over `events`, and two ports keep no
 * order between them, so the parent runs the call only once those events arrived — a sub-agent's
 * tool call is announced before its PreToolUse hook, as it was sent (R-K2).
 */
export interface ParentApi {
  canUseTool(
    toolName: string,
    input: Record<string, unknown>,
    options: { toolUseId: string; agentId: string; eventsSent: number },
  ): Promise<PermissionDecision>;
  runHook(call: HookCall, eventsSent: number): Promise<HookOutcome>;
  callTool(
    toolName: string,
    input: Record<string, unknown>,
    /** `traceparent`: the call's span in the worker (R-V5), so a fork it starts in the parent hangs from it. */
    options: { toolUseId: string; agentId: string; traceparent?: string },
  ): Promise<ParentToolResult>;
  /**
   * Resolves when request `requestId` (numbered by the worker) may go; a failed gate is data, and
   * the request fails with it. `dropSlot` ends the wait of a request that no longer wants to go
   * (its attempt timed out), so it takes no slot.
   */
  requestSlot(requestId: number): Promise<RequestSlotAnswer>;
  dropSlot(requestId: number): void;
  /**
   * R-B8: the parent sends model request `requestId` its own way (a Message Batch entry) and
   * answers with the HTTP response; `dropModelRequest` abandons it (the attempt was aborted).
   */
  sendModelRequest(
    requestId: number,
    body: string,
    headers: Record<string, string>,
  ): Promise<TransportedResponse>;
  dropModelRequest(requestId: number): void;
}

export type RequestSlotAnswer = { readonly ok: true } | { readonly ok: false; readonly message: string };

export type EventPortMessage = SubAgentEvent;

/**
 * comlink speaks the DOM `Endpoint` shape (addEventListener with `{ data }`); Node's
 * MessagePort emits the data itself on `message`. Same adapter as comlink's node-adapter, typed.
 */
type EndpointListener = Parameters<Endpoint["addEventListener"]>[1];

export function portEndpoint(port: MessagePort): Endpoint {
  const listeners = new WeakMap<object, (data: unknown) => void>();
  return {
    postMessage: (message: unknown, transfer?: readonly unknown[]) =>
      port.postMessage(message, transfer as never),
    addEventListener: (_type: string, handler: EndpointListener) => {
      const listener = (data: unknown) => {
        const event = { data } as MessageEvent;
        if (typeof handler === "function") handler(event);
        else handler.handleEvent(event);
      };
      port.on("message", listener);
      listeners.set(handler, listener);
    },
    removeEventListener: (_type: string, handler: EndpointListener) => {
      const listener = listeners.get(handler);
      if (listener) port.off("message", listener);
      listeners.delete(handler);
    },
    start: () => port.start(),
  };
}

/** Reads the pool-wide pause (epoch ms; 0 = not paused). */
export function readPause(buffer: SharedArrayBuffer): number {
  return Number(Atomics.load(new BigInt64Array(buffer), 0));
}

/** Moves the pool-wide pause later (never earlier: two 429s keep the later retry time). */
export function extendPause(buffer: SharedArrayBuffer, untilEpochMs: number): void {
  raiseTo(new BigInt64Array(buffer), Math.ceil(untilEpochMs));
}

/** Sets a shared BigInt64 to `value` unless it already holds more, whichever thread gets there first. */
export function raiseTo(view: BigInt64Array, value: number): void {
  const target = BigInt(value);
  for (;;) {
    const current = Atomics.load(view, 0);
    if (current >= target) return;
    if (Atomics.compareExchange(view, 0, current, target) === current) return;
  }
}

/**
 * One worker's events as the parent hands them on, in the worker's order against its calls (see
 * `ParentApi`): a call runs once the events sent before it were handed on (`reach`), and an event
 * sent after a hook call is handed on once that hook has run (`during`) — the two ports keep no
 * order, and under load the sub-agent's next message overtook its PreToolUse hook (R-K2).
 */
export class EventsReceived {
  readonly #limitMs: number;
  /** Events handed on so far. */
  #count = 0;
  /** Events arrived so far (numbered from 1 as the worker sent them). */
  #arrived = 0;
  #waiting: { readonly count: number; readonly resolve: () => void }[] = [];
  /** The hook calls running, each by the count of events sent before it. */
  readonly #calls: number[] = [];
  /** Events that came after a running hook call, in order, with when they stop waiting for it. */
  readonly #held: { readonly index: number; readonly deliver: () => void; readonly until: number }[] = [];
  #timer: NodeJS.Timeout | undefined;

  /** `limitMs`: the longest a call waits for events, and an event for a hook (a lost event or a hook that waits on its own sub-agent delays, never holds). */
  constructor(limitMs: number) {
    this.#limitMs = limitMs;
  }

  /** One more event arrived: `deliver` hands it on now, or after the hook calls sent before it. */
  arrive(deliver: () => void): void {
    const index = ++this.#arrived;
    if (this.#held.length === 0 && !this.#blocked(index)) {
      this.#handOn(index, deliver);
      return;
    }
    this.#held.push({ index, deliver, until: Date.now() + this.#limitMs });
    this.#armTimer();
  }

  /** Resolves once `count` events were handed on, or after the limit. */
  reach(count: number): Promise<void> {
    if (count <= this.#count) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.#limitMs);
      const wait = { count, resolve: done };
      this.#waiting.push(wait);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
    });
  }

  /** Runs a hook call the worker made after `eventsSent` events: the events it sent later wait for it. */
  async during<T>(eventsSent: number, call: () => Promise<T>): Promise<T> {
    this.#calls.push(eventsSent);
    try {
      await this.reach(eventsSent);
      return await call();
    } finally {
      this.#calls.splice(this.#calls.indexOf(eventsSent), 1);
      this.#release();
    }
  }

  #blocked(index: number): boolean {
    return this.#calls.some((sent) => sent < index);
  }

  #handOn(index: number, deliver: () => void): void {
    this.#count = index;
    const ready = this.#waiting.filter((wait) => wait.count <= this.#count);
    if (ready.length > 0) this.#waiting = this.#waiting.filter((wait) => wait.count > this.#count);
    for (const wait of ready) wait.resolve();
    deliver();
  }

  #release(): void {
    const now = Date.now();
    while (this.#held.length > 0) {
      const next = this.#held[0];
      if (next === undefined || (this.#blocked(next.index) && next.until > now)) break;
      this.#held.shift();
      this.#handOn(next.index, next.deliver);
    }
    if (this.#held.length === 0 && this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  #armTimer(): void {
    if (this.#timer !== undefined) return;
    const first = this.#held[0];
    if (first === undefined) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#release();
        this.#armTimer();
      },
      Math.max(0, first.until - Date.now()),
    );
    this.#timer.unref();
  }
}
