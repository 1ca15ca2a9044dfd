/**
 * Piscina worker entry (built to dist/worker.js): runs one sub-agent per task. A thread carries
 * several sub-agents at once (`concurrentTasksPerWorker`): they wait on HTTP most of the time.
 */
import { randomUUID } from "node:crypto";
import { threadId } from "node:worker_threads";
import type { BeforeSend, CanUseTool, QueuedCommand } from "@forkloop/loop-core";
import * as Comlink from "comlink";
import { modelClientOptions } from "./model-client-options.js";
import { proxyHooks } from "./parent-hooks.js";
import { poolClock } from "./pool-clock.js";
import type { RateLimitPause } from "./sub-agent-io.js";
import { runSubAgent } from "./sub-agent-runner.js";
import {
  type ParentToolResult,
  parentToolResultSchema,
  type SubAgentEvent,
  type SubAgentResult,
} from "./sub-agent-types.js";
import { portSink } from "./telemetry/port-sink.js";
import { formatTraceparent } from "./telemetry/spans.js";
import { toolSpan } from "./telemetry/state.js";
import { encodeRecord } from "./transcript-format.js";
import { createWorkerClient } from "./worker-client.js";
import {
  extendPause,
  type ParentApi,
  portEndpoint,
  type RequestSlotAnswer,
  readPause,
  type WorkerControlApi,
  type WorkerTaskPayload,
} from "./worker-protocol.js";

const QUERY_SOURCE_HEADER = "x-forkloop-query-source";

/** `promise`, or undefined as soon as `signal` aborts (a cancel never waits on the parent). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  let onAbort!: () => void;
  const aborted = new Promise<undefined>((resolve) => {
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  return Promise.race([promise, aborted]).finally(() => signal.removeEventListener("abort", onAbort));
}

function headerOf(init: RequestInit | undefined, name: string): string | null {
  return init?.headers ? new Headers(init.headers).get(name) : null;
}

function retryAfterMs(response: Response): number {
  const ms = Number(response.headers.get("retry-after-ms"));
  if (Number.isFinite(ms) && ms > 0) return ms;
  const seconds = Number(response.headers.get("retry-after"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 1_000;
}

/**
 * The pool's `prewarm()`: a task that makes piscina start (and load) this thread. It also loads
 * what a fork would load on its way to its first request (R-V2) — Node's fetch (undici, behind
 * the `Headers` global) and the transcript's encoder — while the thread is ahead of the fork.
 */
export function warm(): boolean {
  new Headers();
  encodeRecord(null);
  return true;
}

export default async function runTask(payload: WorkerTaskPayload): Promise<SubAgentResult> {
  const { task } = payload;
  // R-R11: the pool's clock (the system clock unless a test gave a skip-ahead one).
  const clock = poolClock(payload.clock);
  const controller = new AbortController();
  const steeringQueue: QueuedCommand[] = [];
  let cancelRequested = false;

  const control: WorkerControlApi = {
    cancel(reason) {
      cancelRequested = true;
      controller.abort(reason);
    },
    steer(text) {
      steeringQueue.push({ uuid: randomUUID(), content: text, kind: "prompt" });
    },
  };
  Comlink.expose(control, portEndpoint(payload.control));
  const parent = Comlink.wrap<ParentApi>(portEndpoint(payload.callbacks));
  // How many events went out so far: a call to the parent says how many came before it, and the
  // parent runs it only after they arrived (two ports keep no order between them).
  let eventsSent = 0;
  const emit = (event: SubAgentEvent) => {
    eventsSent++;
    payload.events.postMessage(event);
  };
  // R-V5: a task carries a trace context only when the parent exports telemetry.
  const telemetry = task.traceparent === undefined ? undefined : portSink(task.id, emit);
  const rateLimitListeners: ((pause: RateLimitPause) => void)[] = [];
  // Event times are on the pool's clock, the one a 429 pause's `until` is on, so a request sent as
  // a pause ends is stamped at or after its end. `performance.timeOrigin + performance.now()` is
  // not: the monotonic clock drifts from the wall clock (0.5 % on a slewed VM clock), a thread's
  // origin more the longer it lives.
  emit({ type: "started", agentId: task.id, threadId, at: clock.now() });

  // R-B1: a cancel ends a wait for a slot at once, here and in the parent, and a
  // cancelled wait takes no slot.
  let requests = 0;
  const waitForSlot = async (stop: AbortSignal) => {
    const requestId = requests++;
    const slot = await untilAborted<RequestSlotAnswer>(parent.requestSlot(requestId), stop);
    if (slot === undefined) parent.dropSlot(requestId).catch(() => {});
    else if (!slot.ok) throw new Error(slot.message);
  };

  // R-B1: every model request of this sub-agent waits here — out a pool-wide 429
  // pause, then for the parent's request gate (`--rpm`) — before loop-core sends it and arms
  // its headers deadline, so neither wait counts as a server that does not answer.
  const beforeSend: BeforeSend = async (signal) => {
    const stop = AbortSignal.any([controller.signal, signal]);
    for (let wait = readPause(payload.pauseBuffer) - clock.now(); wait > 0 && !stop.aborted; ) {
      await clock.sleep(wait, stop);
      wait = readPause(payload.pauseBuffer) - clock.now();
    }
    if (payload.requestGated && !stop.aborted) await waitForSlot(stop);
  };

  // R-B8: with a parent transport (Message Batches rounds), a model request is handed to the
  // parent and its answer becomes the response; an abort drops it there too.
  let transportedIds = 0;
  const transportsModelRequest = (input: Parameters<typeof fetch>[0], init: RequestInit | undefined) =>
    payload.modelTransported === true &&
    (init?.method ?? "GET").toUpperCase() === "POST" &&
    new URL(input instanceof Request ? input.url : String(input)).pathname.endsWith("/v1/messages");
  const viaParent = async (body: string, init: RequestInit | undefined): Promise<Response> => {
    const requestId = transportedIds++;
    const signal = init?.signal ?? undefined;
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, key) => {
      if (key !== "x-api-key" && key !== "authorization") headers[key] = value;
    });
    const answer = await untilAborted(
      parent.sendModelRequest(requestId, body, headers),
      signal ?? controller.signal,
    );
    if (answer === undefined) {
      parent.dropModelRequest(requestId).catch(() => {});
      throw signal?.reason ?? new Error("aborted");
    }
    return new Response(answer.body, { status: answer.status, headers: answer.headers });
  };

  // Every HTTP request of this sub-agent passes here as it goes out: it reports its start (fork
  // latency is measured to this point) and turns a 429 into a pool-wide pause.
  const reportingFetch: typeof fetch = async (input, init) => {
    const body = typeof init?.body === "string" ? init.body : "";
    const model = /"model":"([^"]*)"/.exec(body)?.[1] ?? "";
    emit({
      type: "request_start",
      agentId: task.id,
      model,
      querySource: headerOf(init, QUERY_SOURCE_HEADER) ?? task.querySource,
      at: clock.now(),
    });
    const response = transportsModelRequest(input, init)
      ? await viaParent(String(init?.body ?? ""), init)
      : await fetch(input, init);
    if (response.status === 429) {
      const retryAfter = retryAfterMs(response);
      const at = clock.now();
      const until = at + retryAfter;
      extendPause(payload.pauseBuffer, until);
      emit({ type: "rate_limited", agentId: task.id, retryAfterMs: retryAfter, until });
      for (const listener of rateLimitListeners) listener({ at, retryAfterMs: retryAfter, until });
    }
    return response;
  };
  const client = createWorkerClient({
    ...modelClientOptions(payload.endpoint),
    maxRetries: payload.endpoint.maxRetries ?? 2,
    fetch: reportingFetch,
  });
  const askParent: CanUseTool | undefined = payload.parentCanAsk
    ? (toolName, input, options) =>
        parent.canUseTool(toolName, input, {
          toolUseId: options.toolUseId,
          agentId: options.agentId,
          eventsSent,
        })
    : undefined;

  try {
    return await runSubAgent(task, {
      client,
      ...(payload.endpoint.retry === undefined ? {} : { retry: payload.endpoint.retry }),
      beforeSend,
      ...(payload.clock === undefined ? {} : { clock }),
      signal: controller.signal,
      emit,
      ...(askParent === undefined ? {} : { askParent }),
      hooks: proxyHooks(payload.parentHooks, (call) => parent.runHook(call, eventsSent)),
      callParentTool: async (toolName, input, options) => {
        const span = telemetry === undefined ? undefined : toolSpan(options.toolUseId);
        const traced = span === undefined ? options : { ...options, traceparent: formatTraceparent(span) };
        const answer = parentToolResultSchema.safeParse(await parent.callTool(toolName, input, traced));
        if (answer.success) return answer.data as ParentToolResult;
        return {
          content: `${toolName}: the parent's answer was malformed (${answer.error.message})`,
          isError: true,
        };
      },
      steeringQueue,
      cancelled: () => cancelRequested,
      onRateLimited: (listener) => rateLimitListeners.push(listener),
      ...(telemetry === undefined ? {} : { telemetry }),
    });
  } finally {
    telemetry?.flush();
    parent[Comlink.releaseProxy]();
    for (const port of [payload.control, payload.callbacks, payload.events]) port.close();
  }
}
