import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";

/**
 * A tool's work on a worker thread of its own (R-S12), for the tools whose work can block for
 * minutes on hostile input (Grep's matching, Read's PDF parsing): the caller's thread only waits,
 * and a stopped or overdue call ends its thread. The thread's script posts "ready" once its
 * modules are loaded.
 */
export interface ToolThread {
  readonly worker: Worker;
  /** Settles once the thread has posted "ready", or is gone. */
  readonly loaded: Promise<void>;
  /**
   * Terminates the thread, once it has loaded: terminating a thread while it loads its modules
   * can abort the whole process.
   */
  end(): void;
}

/**
 * Starts the first of `scripts` that exists: the caller's built worker script beside it (in dist/,
 * and in the installed bundle, which lays every entry flat beside its chunks), then the one in
 * dist/ seen from src/ (tests run the sources). The caller writes each URL literally, relative to
 * its own import.meta.url, so the bundle's check of the files it needs beside itself sees them.
 * `name` says which thread in the error when the build is missing.
 */
export function startToolThread(scripts: readonly URL[], name: string): ToolThread {
  const files = scripts.map((url) => fileURLToPath(url));
  const file = files.find((path) => existsSync(path));
  if (file === undefined) {
    throw new Error(
      `${name} is missing (${files.join(", ")}): run \`npx turbo run build --filter=@forkloop/tools\``,
    );
  }
  // No inherited flags: a test runner's `--conditions source` would have the thread load .ts files.
  const worker = new Worker(file, { execArgv: [] });
  const loaded = new Promise<void>((resolve) => {
    const done = () => {
      worker.off("message", onReady);
      resolve();
    };
    const onReady = (message: unknown) => {
      if (message === "ready") done();
    };
    worker.on("message", onReady);
    worker.once("exit", done);
  });
  return { worker, loaded, end: () => void loaded.then(() => worker.terminate()) };
}
