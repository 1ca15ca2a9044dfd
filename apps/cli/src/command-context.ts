/** What every command gets from `main`: streams, environment and the interrupt signal. */
export interface CommandContext {
  readonly stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stderr: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  readonly stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  readonly env: NodeJS.ProcessEnv;
  readonly cwd: string;
  /** Aborted on the first Ctrl+C (SIGINT), SIGTERM or closed stdout (process-stop.ts); a later Ctrl+C exits at once. */
  readonly signal: AbortSignal;
}
