import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import { MessageChannel, type ResourceLimits } from "node:worker_threads";
import type * as ComlinkModule from "comlink";
import type { Piscina } from "piscina";
import { OrchestratorError, toWireError } from "./errors.js";
import { countHooks, runParentHook } from "./parent-hooks.js";
import type { SharedClock } from "./pool-clock.js";
import { subAgentResult } from "./sub-agent-outcome.js";
import {
  type ModelEndpoint,
  type ParentCallbacks,
  type ParentToolHandler,
  type SubAgentEvent,
  type SubAgentHandle,
  type SubAgentResult,
  type SubAgentTask,
  subAgentResultSchema,
  type TransportedResponse,
} from "./sub-agent-types.js";
import { forkSpan } from "./telemetry/fork-span.js";
import { parseTraceparent } from "./telemetry/spans.js";
import { activeSink, livePools, registerToolSpan } from "./telemetry/state.js";
import { ThreadLoading } from "./thread-loading.js";
import {
  EventsReceived,
  extendPause,
  type ParentApi,
  portEndpoint,
  type WorkerControlApi,
  type WorkerTaskPayload,
} from "./worker-protocol.js";

// R-V2: the thread pool and the port protocol are required when a pool is made (a query's first
// session) and a sub-agent runs, not when the package is imported.
const requireOnUse = createRequire(import.meta.url);
let comlink: typeof ComlinkModule | undefined;
const Comlink = (): typeof ComlinkModule => {
  comlink ??= requireOnUse("comlink") as typeof ComlinkModule;
  return comlink;
};

export type { ParentToolHandler } from "./sub-agent-types.js";

export interface AgentPoolOptions {
  readonly endpoint: ModelEndpoint;
  /** Worker threads (default: the number of cores). */
  readonly maxThreads?: number;
  /** Sub-agents one thread carries at once; they are I/O-bound (default 16). */
  readonly concurrentTasksPerWorker?: number;
  readonly resourceLimits?: ResourceLimits;
  /** How long a cooperative cancel may take before the thread is killed (default 5 s). */
  readonly cancelGraceMs?: number;
  /** Threads started up front so the first fork does not pay a thread start (default 1). */
  readonly minThreads?: number;
  /** The worker script (default: dist/worker.js beside this module). */
  readonly workerFile?: string | URL;
  /** Parent-side tools a worker may forward calls to (e.g. nested `Agent` calls). */
  readonly parentTools?: ParentToolHandler;
  /** R-R11: the clock every wait of the pool's requests runs on (default the system clock; tests: `skipAheadClock()`). */
  readonly clock?: SharedClock;
}

export interface RunAllOptions {
  /** R-F4 warming (default true): the first task alone until its response has started. */
  readonly warm?: boolean;
  /**
   * Asked when the warming task ends before any response started (it failed). False cancels the
   * others before they send anything — for a failure every task would repeat, such as a bad key
   * or an unknown model; by default they are released.
   */
  readonly releaseAfterFailure?: (first: SubAgentResult) => boolean;
}

export interface AgentPool {
  /** Runs one sub-agent's query() loop in a worker (R-F2). */
  run(task: SubAgentTask, hooks?: ParentCallbacks): SubAgentHandle;
  /** R-F4: sends the first, releases the rest once its response has started. */
  runAll(tasks: readonly SubAgentTask[], hooks?: ParentCallbacks, options?: RunAllOptions): SubAgentHandle[];
  /** Pool-wide pause: every worker's next request waits until then (a 429's retry-after). */
  pauseUntil(epochMs: number): void;
  stats(): { threads: number; running: number; queued: number; completed: number };
  /**
   * R-V2: starts a thread now if the pool has none, so a fork that comes later does not wait for
   * a cold one (a session calls it when its reply begins an Agent or Skill call, the thread loading
   * while the call's input streams).
   * Resolves once the thread has loaded (a fork before that may start a second thread).
   */
  prewarm(): Promise<void>;
  close(): Promise<void>;
}

/** The built worker: workers need JavaScript on Node 20, so from src (vitest) use dist. */
function defaultWorkerFile(): string {
  const beside = fileURLToPath(new URL("./worker.js", import.meta.url));
  if (existsSync(beside)) return beside;
  const built = fileURLToPath(new URL("../dist/worker.js", import.meta.url));
  if (existsSync(built)) return built;
  throw new OrchestratorError(
    "internal",
    `worker script not found at ${beside} or ${built}: run \`npx turbo run build --filter=@forkloop/orchestrator...\``,
  );
}

function failedResult(
  agentId: string,
  started: number,
  code: string,
  message: string,
  status: SubAgentResult["status"] = "failed",
): SubAgentResult {
  return subAgentResult(agentId, started, status, { error: { code, message } });
}

/** Events that mean "the response has started", so a warmed cache entry is readable (R-F4). */
const SLOTS_RELEASED = "the sub-agent ended or was cancelled";
/** Longest a result waits for its sub-agent's last events (see run). */
const EVENTS_DRAIN_LIMIT_MS = 2_000;

/** A transport that cannot answer is a 500 to the SDK: retried like any server error (R-B8). */
function transportFailure(message: string): TransportedResponse {
  return {
    status: 500,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ type: "error", error: { type: "api_error", message } }),
  };
}

export function responseStarted(event: SubAgentEvent): boolean {
  return (event.type === "usage" && event.phase === "start") || event.type === "text";
}

/**
 * The parent's execArgv without `--conditions source`: a test runner resolves workspace
 * packages to their TypeScript sources that way, but a worker runs plain Node and needs dist.
 */
function workerExecArgv(execArgv: readonly string[] = process.execArgv): string[] {
  const kept: string[] = [];
  for (let index = 0; index < execArgv.length; index++) {
    const arg = execArgv[index] ?? "";
    if (arg === "--conditions" || arg === "-C") {
      index++;
      continue;
    }
    if (arg.startsWith("--conditions=") || arg.startsWith("-C=")) continue;
    kept.push(arg);
  }
  return kept;
}

export function createAgentPool(options: AgentPoolOptions): AgentPool {
  const maxThreads = Math.max(1, options.maxThreads ?? availableParallelism());
  const cancelGraceMs = options.cancelGraceMs ?? 5_000;
  const pauseBuffer = new SharedArrayBuffer(8);
  const minThreads = Math.min(maxThreads, options.minThreads ?? 1);
  // R-V2: with no thread wanted up front, the thread pool (piscina) is required and made at the
  // first fork or prewarm: a session that never forks loads none of it.
  let piscina: Piscina<WorkerTaskPayload, unknown> | undefined;
  let loading: ThreadLoading | undefined;
  const threadPool = (): Piscina<WorkerTaskPayload, unknown> => {
    if (piscina !== undefined) return piscina;
    // A fork asked for before close() but reaching here after it starts no threads close missed.
    if (closed) throw new OrchestratorError("internal", "the agent pool is closed");
    const { Piscina: Pool } = requireOnUse("piscina") as typeof import("piscina");
    const made = new Pool<WorkerTaskPayload, unknown>({
      filename: String(options.workerFile ?? defaultWorkerFile()),
      minThreads,
      maxThreads,
      concurrentTasksPerWorker: options.concurrentTasksPerWorker ?? 16,
      // 'sync' (the default) parks idle threads in Atomics.wait, which freezes their timers and
      // keep-alive sockets: a sub-agent waiting on HTTP would never wake up.
      atomics: "disabled",
      idleTimeout: 60_000,
      execArgv: workerExecArgv(),
      ...(options.resourceLimits === undefined ? {} : { resourceLimits: options.resourceLimits }),
    });
    // A dead worker rejects its own tasks (each becomes an error result below); the pool-level
    // 'error' event only fires for a crash with no task on it, which must not crash the parent.
    made.on("error", () => {});
    loading = new ThreadLoading(made);
    piscina = made;
    return made;
  };
  const threads = () => piscina?.threads ?? [];
  let running = 0;
  let completed = 0;
  let closed = false;
  let warmed: Promise<void> | undefined;
  if (minThreads > 0) threadPool();

  function run(requested: SubAgentTask, hooks: ParentCallbacks = {}): SubAgentHandle {
    const started = performance.now();
    // R-V5: the fork's span, and its trace context in the task, when telemetry is on.
    const fork = forkSpan(requested);
    const task = fork === undefined ? requested : { ...requested, traceparent: fork.span.traceparent };
    if (closed) {
      const failed = failedResult(task.id, started, "pool_closed", "the agent pool is closed");
      fork?.end(failed);
      const result = Promise.resolve(failed);
      return { id: task.id, result, cancel() {}, steer() {} };
    }
    const control = new MessageChannel();
    const callbacks = new MessageChannel();
    const events = new MessageChannel();
    // Aborted on cancel and when the sub-agent ends: a request waiting on the gate stops waiting.
    // Always with a string reason: abort() without one makes a DOMException whose unformatted
    // stack keeps the aborting closures (and what they hold) alive as long as the signal (R-V3).
    const slots = new AbortController();
    const waits = new Map<number, AbortController>();
    const transported = new Map<number, AbortController>();
    // Every answer crosses the thread as data: a callback that throws becomes a denial, "no
    // opinion" or an error result, never a rejected comlink call (STYLE.md §5).
    const received = new EventsReceived(EVENTS_DRAIN_LIMIT_MS);
    const parentApi: ParentApi = {
      async canUseTool(toolName, input, { eventsSent, ...callOptions }) {
        if (!hooks.canUseTool) {
          return { behavior: "deny", message: `${toolName} needs permission and no one can grant it` };
        }
        await received.reach(eventsSent);
        try {
          return await hooks.canUseTool(toolName, input, {
            ...callOptions,
            signal: new AbortController().signal,
          });
        } catch (error) {
          return { behavior: "deny", message: `the permission check failed: ${toWireError(error).message}` };
        }
      },
      async runHook(call, eventsSent) {
        try {
          const parentHooks = hooks.hooks;
          if (parentHooks === undefined) return {};
          return await received.during(eventsSent, () => runParentHook(parentHooks, call, task));
        } catch {
          return {}; // LoopHooks contract: a failing hook has no opinion
        }
      },
      async requestSlot(requestId) {
        const wait = new AbortController();
        waits.set(requestId, wait);
        try {
          await hooks.requestSlot?.(AbortSignal.any([slots.signal, wait.signal]));
          return { ok: true };
        } catch (error) {
          return { ok: false, message: `the request limiter failed: ${toWireError(error).message}` };
        } finally {
          waits.delete(requestId);
        }
      },
      dropSlot(requestId) {
        waits.get(requestId)?.abort();
      },
      async sendModelRequest(requestId, body, headers) {
        const transport = hooks.modelTransport;
        if (!transport) return transportFailure("this pool carries no model requests");
        const wait = new AbortController();
        transported.set(requestId, wait);
        try {
          return await transport(
            { agentId: task.id, body, headers },
            AbortSignal.any([slots.signal, wait.signal]),
          );
        } catch (error) {
          return transportFailure(`the parent's model transport failed: ${toWireError(error).message}`);
        } finally {
          transported.delete(requestId);
        }
      },
      dropModelRequest(requestId) {
        transported.get(requestId)?.abort();
      },
      async callTool(toolName, input, { traceparent, ...callOptions }) {
        const handler = hooks.callTool ?? options.parentTools;
        if (!handler) return { content: `${toolName} is not available in a sub-agent`, isError: true };
        // R-V5: the worker's span of this call stands in the registry while it runs here, so a
        // nested Agent call's fork hangs from it.
        const span = activeSink() === undefined ? undefined : parseTraceparent(traceparent);
        if (span !== undefined) registerToolSpan(callOptions.toolUseId, span);
        try {
          return await handler(toolName, input, callOptions);
        } catch (error) {
          return {
            content: `${toolName} failed in the parent: ${toWireError(error).message}`,
            isError: true,
          };
        } finally {
          if (span !== undefined) registerToolSpan(callOptions.toolUseId, undefined);
        }
      },
    };
    Comlink().expose(parentApi, portEndpoint(callbacks.port1));
    const workerControl = Comlink().wrap<WorkerControlApi>(portEndpoint(control.port1));
    let threadId: number | undefined;
    // After the events handed on (some may wait for a hook call, see EventsReceived).
    const eventsClosed = new Promise<void>((resolve) =>
      events.port1.once("close", () => received.arrive(() => resolve())),
    );
    events.port1.on("message", (event: SubAgentEvent) => {
      // A 429's pause holds every thread at once, whatever the event waits for.
      if (event.type === "rate_limited") extendPause(pauseBuffer, event.until);
      received.arrive(() => {
        if (event.type === "telemetry") {
          fork?.ingest(event);
          return;
        }
        if (event.type === "started") {
          threadId = event.threadId;
          fork?.span.set({ "thread.id": event.threadId });
        }
        hooks.onEvent?.(event);
      });
    });

    let killed = false;
    let cancelReason: string | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    // The hard kill. Not piscina's AbortSignal: piscina 5 runs a task that has a signal ALONE on
    // its thread (`isRunningAbortableTask`), which would defeat concurrentTasksPerWorker. So the
    // kill terminates the thread that carries the sub-agent; piscina then fails every task on it
    // and starts a replacement — the same effect as an abort, paid only when cancel failed.
    const hardKill = () => {
      const worker = threads().find((thread) => thread.threadId === threadId);
      if (threadId === undefined || !worker) {
        // Not started yet: the queued cancel will stop it as soon as it starts; check again.
        graceTimer = setTimeout(hardKill, cancelGraceMs);
        graceTimer.unref();
        return;
      }
      killed = true;
      void worker.terminate();
    };
    const payload: WorkerTaskPayload = {
      task,
      endpoint: options.endpoint,
      control: control.port2,
      callbacks: callbacks.port2,
      events: events.port2,
      pauseBuffer,
      ...(options.clock === undefined ? {} : { clock: options.clock }),
      requestGated: hooks.requestSlot !== undefined,
      modelTransported: hooks.modelTransport !== undefined,
      parentCanAsk: hooks.canUseTool !== undefined,
      parentHooks: countHooks(hooks.hooks),
    };
    running++;
    // R-V2: a fork that comes while the prewarmed thread still loads waits for it. Asked at once,
    // piscina sees no ready thread and starts a second, and the two load side by side on the
    // same cores — the fork then runs on the later one, as if nothing had been warmed.
    const result = (warmed ?? Promise.resolve())
      .then(() => threadPool().run(payload, { transferList: [control.port2, callbacks.port2, events.port2] }))
      .then((value): SubAgentResult => {
        const parsed = subAgentResultSchema.safeParse(value);
        if (!parsed.success) {
          return failedResult(
            task.id,
            started,
            "internal",
            `malformed result from worker: ${parsed.error.message}`,
          );
        }
        return parsed.data as SubAgentResult;
      })
      .catch((error: unknown): SubAgentResult => {
        const message = error instanceof Error ? error.message : String(error);
        if (killed) {
          return failedResult(
            task.id,
            started,
            "worker_killed",
            `cancelled (${cancelReason ?? "cancel"}); the worker did not stop within ${cancelGraceMs} ms and was killed`,
            "cancelled",
          );
        }
        if (closed) {
          return failedResult(
            task.id,
            started,
            "pool_closed",
            "the agent pool was closed while this sub-agent ran",
            "cancelled",
          );
        }
        // R-F2: a worker that threw or died is an error result for each sub-agent it carried;
        // piscina replaces the thread.
        return failedResult(
          task.id,
          started,
          "worker_crashed",
          `the worker thread running this sub-agent died: ${message}`,
        );
      })
      .then(async (final) => {
        // The result and the events come over different channels, which keep no order between
        // them: under load the result overtook the sub-agent's last events (its final text
        // printed after the parent's tool result). The worker closes its events port once it
        // has sent them all, and 'close' comes after every message sent before it (R-F2).
        // Bounded: a port left open (a bug) delays the result, never holds it.
        let timer: NodeJS.Timeout | undefined;
        const limit = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, EVENTS_DRAIN_LIMIT_MS);
        });
        await Promise.race([eventsClosed, limit]);
        clearTimeout(timer);
        return final;
      })
      .then((final) => {
        running--;
        completed++;
        fork?.end(final);
        slots.abort(SLOTS_RELEASED);
        if (graceTimer) clearTimeout(graceTimer);
        // Let queued events (delivered before the result) reach the consumer before `done`.
        setImmediate(() => {
          hooks.onEvent?.({ type: "done", agentId: task.id, result: final });
          workerControl[Comlink().releaseProxy]();
          for (const port of [control.port1, callbacks.port1, events.port1]) port.close();
        });
        return final;
      });

    return {
      id: task.id,
      result,
      cancel(reason = "cancelled by the parent") {
        if (cancelReason !== undefined) return;
        cancelReason = reason;
        slots.abort(SLOTS_RELEASED);
        // Cooperative first (R-F2): aborting the piscina task kills the thread and every other
        // sub-agent on it, with no `finally` run — so only after the grace period.
        workerControl.cancel(reason).catch(() => {});
        graceTimer = setTimeout(hardKill, cancelGraceMs);
        graceTimer.unref();
      },
      steer(text: string) {
        workerControl.steer(text).catch(() => {});
      },
    };
  }

  function runAll(
    tasks: readonly SubAgentTask[],
    hooks: ParentCallbacks = {},
    runOptions: RunAllOptions = {},
  ): SubAgentHandle[] {
    const [first, ...rest] = tasks;
    if (first === undefined) return [];
    if (runOptions.warm === false || rest.length === 0) return tasks.map((task) => run(task, hooks));
    // R-F4: a cache entry is readable only once the writing response has started, so N forks
    // sent at once would all miss. Send one, release the others on its first response event.
    let release!: () => void;
    let isReleased = false;
    const released = new Promise<void>((resolve) => {
      release = () => {
        isReleased = true;
        resolve();
      };
    });
    // The first ended (its `done` event or its result, whichever comes first) without a response.
    const firstEnded = (result?: SubAgentResult) => {
      if (isReleased) return;
      if (result !== undefined && runOptions.releaseAfterFailure?.(result) === false) {
        for (const handle of others) handle.cancel("the first task failed in a way every task would");
      }
      release();
    };
    const firstHandle = run(first, {
      ...hooks,
      onEvent(event) {
        if (event.type === "done") firstEnded(event.result);
        else if (responseStarted(event)) release();
        hooks.onEvent?.(event);
      },
    });
    const others = rest.map((task) => deferredRun(task, hooks, released));
    firstHandle.result.then(firstEnded, () => firstEnded());
    return [firstHandle, ...others];
  }

  /** A handle whose task starts when `gate` resolves; cancel/steer before that are honoured. */
  function deferredRun(task: SubAgentTask, hooks: ParentCallbacks, gate: Promise<void>): SubAgentHandle {
    let inner: SubAgentHandle | undefined;
    let cancelledBeforeStart: string | undefined;
    const steering: string[] = [];
    const started = performance.now();
    const result = gate.then(() => {
      if (cancelledBeforeStart !== undefined) {
        return failedResult(task.id, started, "cancelled", cancelledBeforeStart, "cancelled");
      }
      inner = run(task, hooks);
      for (const text of steering) inner.steer(text);
      return inner.result;
    });
    return {
      id: task.id,
      result,
      cancel(reason = "cancelled by the parent") {
        if (inner) inner.cancel(reason);
        else cancelledBeforeStart ??= reason;
      },
      steer(text) {
        if (inner) inner.steer(text);
        else steering.push(text);
      },
    };
  }

  const occupancy = {
    stats: () => ({ threads: threads().length, running, queued: piscina?.queueSize ?? 0 }),
  };
  livePools.add(occupancy);

  return {
    run,
    runAll,
    pauseUntil(epochMs: number) {
      extendPause(pauseBuffer, epochMs);
    },
    prewarm() {
      if (closed || threads().length > 0) return warmed ?? Promise.resolve();
      // The worker's `warm` export does nothing: running it makes piscina start and load a thread.
      warmed ??= threadPool()
        .run(undefined as unknown as WorkerTaskPayload, { name: "warm" })
        .then(
          () => {},
          () => {},
        );
      return warmed;
    },
    stats() {
      return {
        threads: threads().length,
        running,
        queued: piscina?.queueSize ?? 0,
        completed,
      };
    },
    async close() {
      if (closed) return;
      closed = true;
      livePools.delete(occupancy);
      // Never terminate a thread that is still loading its module (a native abort).
      await loading?.settled();
      await piscina?.destroy();
    },
  };
}
