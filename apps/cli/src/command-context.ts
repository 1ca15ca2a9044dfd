import type { SharedClock } from "@forkloop/orchestrator";

/** What every command gets from `main`: streams, environment and the interrupt signal. */
export interface CommandContext {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Aborted on the first Ctrl+C (SIGINT), SIGTERM or closed stdout (process-stop.ts); a later Ctrl+C exits at once. */
  readonly signal: AbortSignal;
  /** Runs a handler before a later Ctrl+C exits at once (process-stop.ts); absent in tests run in-process. */
  readonly beforeForcedExit?: (handler: () => Promise<void>) => () => void;
  /**
   * The process runs this one command and exits (main.ts); absent in tests run in-process, whose
   * process runs many. A `run` then warms its fork thread as the session starts (R-V2).
   */
  readonly oneShotProcess?: boolean;
  /**
   * R-R11: the clock a batch's model requests wait on (a far rate-limit reset, the pool's 429
   * pause, backoff); the system clock when absent. Tests give a skip-ahead one.
   */
  readonly clock?: SharedClock;
}
