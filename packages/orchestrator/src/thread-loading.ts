import type { Worker } from "node:worker_threads";
import type { Piscina } from "piscina";

/** Longest a close waits for a starting thread (a thread that never loads is a bug, not a hang). */
const THREAD_LOAD_WAIT_MS = 15_000;

/**
 * The key of the message a piscina worker posts once its task module is loaded (piscina 5,
 * `common.READY`): it loads the module with `require` (Node 20's require(esm)), then posts it.
 */
const PISCINA_READY = "_WORKER_READY";

/**
 * Which of the pool's threads have finished loading the worker module. Terminating a
 * thread while Node loads an ES module through require(esm) aborts the whole process — "IsGraphAsync
 * … must be used on an instantiated module", or an assertion in CreateRequiredModuleFacade, exit
 * 134 — which short sessions hit by closing their pool right after its first thread started.
 * Threads that piscina starts with the pool are watched for its ready message; a thread started
 * later is announced by `workerCreate` only once it is ready. `settled()` waits for every thread
 * to be ready (or gone).
 */
export class ThreadLoading {
  readonly #ready = new Set<number>();
  readonly #waiting = new Map<number, () => void>();

  constructor(private readonly piscina: Piscina) {
    // The threads of minThreads exist now, and piscina calls them ready before they are.
    const initial = new Set(piscina.threads.map((thread) => thread.threadId));
    for (const thread of piscina.threads) {
      thread.on("message", (message: unknown) => {
        if (typeof message === "object" && message !== null && PISCINA_READY in message) {
          this.#markReady(thread.threadId);
        }
      });
    }
    piscina.on("workerCreate", (worker: { id: number }) => {
      if (!initial.has(worker.id)) this.#markReady(worker.id);
    });
  }

  /** Resolves once no thread is loading (a replacement started meanwhile is waited for too). */
  async settled(): Promise<void> {
    const deadline = Date.now() + THREAD_LOAD_WAIT_MS;
    for (
      let starting = this.#starting();
      starting.length > 0 && Date.now() < deadline;
      starting = this.#starting()
    ) {
      await this.#readyOrExited(starting, deadline - Date.now());
    }
  }

  #markReady(threadId: number): void {
    this.#ready.add(threadId);
    this.#waiting.get(threadId)?.();
  }

  #starting(): Worker[] {
    return this.piscina.threads.filter((thread) => !this.#ready.has(thread.threadId));
  }

  async #readyOrExited(starting: readonly Worker[], waitMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(
        starting.map(
          (thread) =>
            new Promise<void>((resolve) => {
              this.#waiting.set(thread.threadId, resolve);
              thread.once("exit", () => resolve());
            }),
        ),
      ),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, waitMs);
      }),
    ]);
    clearTimeout(timer);
  }
}
