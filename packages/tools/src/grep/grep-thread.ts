import { startToolThread, type ToolThread } from "../tool-thread.js";
import type { FileMatchRequest } from "./grep-text.js";
import type { GrepOutcome } from "./search.js";

type ThreadMessage = "ready" | { readonly outcome: GrepOutcome } | { readonly failure: string };

/** One loaded thread kept between searches, so a Grep does not pay a thread start each time. */
let idle: ToolThread | undefined;

/**
 * The JavaScript Grep backend's matching, on a thread of its own (R-S12). re2js is linear in the
 * input, but a large program over a large file is still long — `(?i)(?:\w|\s){500,999}\x{00}`
 * over one 1 MB file runs for minutes — and a match on the caller's thread blocks everything on
 * it: the signal handlers, the other sub-agents' messages, the abort. Here the caller's thread only
 * waits; a stopped search answers at once and its thread is terminated.
 */
export async function matchFilesOffThread(
  files: readonly string[],
  request: FileMatchRequest,
  signal: AbortSignal,
): Promise<GrepOutcome> {
  if (signal.aborted) throw stopped();
  const thread = idle ?? startThread();
  idle = undefined;
  thread.worker.ref();
  return new Promise<GrepOutcome>((resolve, reject) => {
    const settle = (keep: boolean) => {
      thread.worker.off("message", onMessage);
      thread.worker.off("error", onError);
      thread.worker.off("exit", onExit);
      signal.removeEventListener("abort", onAbort);
      if (keep && idle === undefined) {
        thread.worker.unref();
        idle = thread;
      } else thread.end();
    };
    const onMessage = (message: ThreadMessage) => {
      if (message === "ready") return;
      settle("outcome" in message);
      if ("outcome" in message) resolve(message.outcome);
      else reject(new Error(`the search thread failed: ${message.failure}`));
    };
    const onError = (error: Error) => {
      settle(false);
      reject(error);
    };
    const onExit = (code: number) => onError(new Error(`the search thread exited (code ${code})`));
    const onAbort = () => {
      settle(false);
      reject(stopped());
    };
    thread.worker.on("message", onMessage);
    thread.worker.on("error", onError);
    thread.worker.on("exit", onExit);
    signal.addEventListener("abort", onAbort, { once: true });
    thread.worker.postMessage({ files, request });
  });
}

/** What a stopped search rejects with (the loop answers the call as stopped by the user). */
function stopped(): DOMException {
  return new DOMException("Grep was stopped", "AbortError");
}

function startThread(): ToolThread {
  const thread = startToolThread(
    [
      new URL("./grep-thread.worker.js", import.meta.url),
      new URL("../../dist/grep/grep-thread.worker.js", import.meta.url),
    ],
    "Grep's search thread",
  );
  // A thread that fails while idle is simply not reused (a search in flight hears of it itself).
  thread.worker.on("error", () => {});
  thread.worker.once("exit", () => {
    if (idle === thread) idle = undefined;
  });
  return thread;
}
