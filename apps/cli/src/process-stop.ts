import { EXIT, type ExitCode } from "./exit-codes.js";

/**
 * Why the process was asked to stop: Ctrl+C, a SIGTERM (`timeout`, `kill`, a CI runner), a SIGHUP
 * (the terminal closed, an ssh connection dropped), a SIGQUIT (Ctrl+\, a supervisor's quit) or a
 * closed pipe.
 */
export type StopCause = "sigint" | "sigterm" | "sighup" | "sigquit" | "epipe";

/** The stop each signal asks for, and its exit code (128 + the signal's number, as a shell reports). */
const SIGNALS = {
  SIGINT: { cause: "sigint", code: EXIT.interrupted },
  SIGTERM: { cause: "sigterm", code: EXIT.terminated },
  // R-R8: handled like SIGTERM — without a handler the process died at once, a running Bash
  // command finished its side effect after forkloop was gone, and a batch wrote no report.
  SIGHUP: { cause: "sighup", code: EXIT.hangup },
  // R-R8: SIGHUP's neighbour: by default SIGQUIT (Ctrl+\ in a terminal) kills the process with a
  // core dump — no report, a running Bash command's group left behind; it stops as SIGTERM does.
  SIGQUIT: { cause: "sigquit", code: EXIT.quit },
} as const satisfies Record<string, { cause: StopCause; code: ExitCode }>;

/**
 * A repeat of the first signal this soon is the same request: `timeout -s INT` and a shell can
 * both deliver one a few milliseconds apart (half such runs exited without a report).
 * A person pressing Ctrl+C again to leave at once is slower than this.
 */
const REPEATED_SIGNAL_WINDOW_MS = 300;

export interface ProcessStop {
  /** Aborted on the first SIGINT, SIGTERM, SIGHUP, SIGQUIT or EPIPE; commands stop cooperatively on it. */
  readonly signal: AbortSignal;
  /** The exit code for what the command returned, given why it was stopped. */
  exitCode(returned: ExitCode): number;
  /** False once stdout's reader has gone: nothing more can be written there. */
  stdoutOpen(): boolean;
  /**
   * Runs `handler` (for at most FORCED_EXIT_GRACE_MS) when a later signal exits at once — the
   * last thing done before leaving, e.g. cancelling open Message Batches (R-B10). Returns the
   * function that removes it.
   */
  beforeForcedExit(handler: () => Promise<void>): () => void;
}

/** How long the handlers of a forced exit may take before the process leaves anyway. */
const FORCED_EXIT_GRACE_MS = 5_000;

/**
 * Installs the process's stop handling. The first SIGINT, SIGTERM, SIGHUP or SIGQUIT aborts
 * `signal`, so transcripts and journals end consistently; a repeat within
 * REPEATED_SIGNAL_WINDOW_MS is ignored; a later one exits at once. A closed stdout or stderr
 * (`forkloop run … | head -1`) stops the work quietly — no EPIPE stack trace — and exits 141
 * (128 + SIGPIPE), as a Unix tool killed by the closed pipe would.
 */
export function installProcessStop(
  proc: Pick<NodeJS.Process, "on" | "exit" | "stdout" | "stderr"> = process,
  now: () => number = Date.now,
): ProcessStop {
  const controller = new AbortController();
  let cause: StopCause | undefined;
  let firstSignalAt = 0;
  let stdoutClosed = false;
  let stderrClosed = false;
  const forcedExitHandlers = new Set<() => Promise<void>>();
  let forcing = false;

  const stop = (next: StopCause) => {
    if (cause !== undefined) return;
    cause = next;
    // Not loop-core's SUBMIT_INTERRUPT_REASON: this is a hard interrupt (R-L16), which leaves an interrupt notice.
    controller.abort(next);
  };
  const onSignal = (signal: keyof typeof SIGNALS) => {
    if (cause === undefined) {
      firstSignalAt = now();
      if (!stderrClosed) {
        proc.stderr.write(`\nforkloop: ${signal} received, stopping (press Ctrl+C again to exit at once)\n`);
      }
      stop(SIGNALS[signal].cause);
      return;
    }
    if (now() - firstSignalAt < REPEATED_SIGNAL_WINDOW_MS) return;
    if (forcedExitHandlers.size === 0 || forcing) {
      proc.exit(SIGNALS[signal].code);
      return;
    }
    forcing = true;
    const grace = new Promise<void>((resolve) => setTimeout(resolve, FORCED_EXIT_GRACE_MS).unref());
    const handlers = Promise.allSettled([...forcedExitHandlers].map((handler) => handler()));
    void Promise.race([handlers, grace]).then(() => proc.exit(SIGNALS[signal].code));
  };
  for (const signal of Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]) proc.on(signal, onSignal);

  const onPipeError = (stream: "stdout" | "stderr") => (error: NodeJS.ErrnoException) => {
    // EIO: the terminal is gone (after a SIGHUP, writes to it fail so), as good as a closed pipe.
    if (error.code !== "EPIPE" && error.code !== "EIO") throw error;
    if (stream === "stdout") stdoutClosed = true;
    else stderrClosed = true;
    stop("epipe");
  };
  proc.stdout.on("error", onPipeError("stdout"));
  proc.stderr.on("error", onPipeError("stderr"));

  return {
    signal: controller.signal,
    exitCode(returned) {
      if (cause === "epipe") return EXIT.brokenPipe;
      if (cause === "sigterm" && returned === EXIT.interrupted) return EXIT.terminated;
      if (cause === "sighup" && returned === EXIT.interrupted) return EXIT.hangup;
      if (cause === "sigquit" && returned === EXIT.interrupted) return EXIT.quit;
      return returned;
    },
    stdoutOpen: () => !stdoutClosed,
    beforeForcedExit(handler) {
      forcedExitHandlers.add(handler);
      return () => forcedExitHandlers.delete(handler);
    },
  };
}
