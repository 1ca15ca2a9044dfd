import { unescapedStream } from "@forkloop/tools";

/**
 * The live progress of `forkloop batch`: on a TTY one line redrawn in place (done / running /
 * failed, ETA, tokens, cost, cache-read %); elsewhere (CI logs, pipes) plain lines, one per
 * finished item, that read well in a log file.
 */

export interface ProgressSnapshot {
  readonly total: number;
  /** Finished before this process started (a resume skips them). */
  readonly skipped: number;
  readonly succeeded: number;
  readonly failed: number;
  readonly running: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheCreationInputTokens: number;
  readonly cacheReadInputTokens: number;
  readonly costUsd: number;
  readonly elapsedMs: number;
  /** Set while the pool waits out a 429's retry-after. */
  readonly pausedForMs?: number;
}

export function formatCount(value: number): string {
  if (value >= 1_000_000) return `${(value / 1_000_000).toFixed(1)}M`;
  if (value >= 1_000) return `${(value / 1_000).toFixed(1)}k`;
  return String(value);
}

export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "?";
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}

/** Share of prompt tokens read from the cache (0.1× price), the figure the shared prefix moves. */
export function cacheReadShare(snapshot: {
  inputTokens: number;
  cacheCreationInputTokens: number;
  cacheReadInputTokens: number;
}): number {
  const prompt = snapshot.inputTokens + snapshot.cacheCreationInputTokens + snapshot.cacheReadInputTokens;
  return prompt === 0 ? 0 : snapshot.cacheReadInputTokens / prompt;
}

/** Remaining time from this run's own throughput (skipped items say nothing about speed). */
export function etaMs(snapshot: ProgressSnapshot): number {
  const finishedNow = snapshot.succeeded + snapshot.failed;
  const remaining = snapshot.total - snapshot.skipped - finishedNow;
  if (remaining <= 0) return 0;
  if (finishedNow === 0) return Number.POSITIVE_INFINITY;
  return (remaining * snapshot.elapsedMs) / finishedNow;
}

/** The one status line (pure, so tests pin its content). */
export function formatProgressLine(snapshot: ProgressSnapshot): string {
  const done = snapshot.skipped + snapshot.succeeded + snapshot.failed;
  const parts = [
    `${done}/${snapshot.total} done`,
    `${snapshot.running} running`,
    `${snapshot.failed} failed`,
    `ETA ${formatDuration(etaMs(snapshot))}`,
    `${formatCount(snapshot.inputTokens + snapshot.cacheCreationInputTokens + snapshot.cacheReadInputTokens)} in / ${formatCount(snapshot.outputTokens)} out tok`,
    `$${snapshot.costUsd.toFixed(4)}`,
    `cache-read ${(cacheReadShare(snapshot) * 100).toFixed(0)}%`,
  ];
  if (snapshot.pausedForMs !== undefined && snapshot.pausedForMs > 0) {
    parts.push(`paused ${formatDuration(snapshot.pausedForMs)} (rate limited)`);
  }
  return parts.join(" · ");
}

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * Given a terminalStream (the CLI's stderr), the lines it logs — item labels from file names,
 * errors, notices — go through it escaped (R-S14), and only the display's own redraw sequences
 * are written to the stream under it.
 */
export class ProgressDisplay {
  #lastDraw = 0;
  #drawn = false;
  readonly #controls: ProgressStream;

  constructor(
    private readonly stream: ProgressStream,
    private readonly options: { readonly minRedrawMs?: number; readonly now?: () => number } = {},
  ) {
    this.#controls = unescapedStream(stream);
  }

  get isTTY(): boolean {
    return this.stream.isTTY === true;
  }

  /** Redraws the status line (TTY only; throttled so 500 fast items do not flood the terminal). */
  update(snapshot: ProgressSnapshot, force = false): void {
    if (!this.isTTY) return;
    const now = (this.options.now ?? Date.now)();
    if (!force && now - this.#lastDraw < (this.options.minRedrawMs ?? 100)) return;
    this.#lastDraw = now;
    // A pty without a size reports 0 columns: fall back to a wide line rather than cutting it to nothing.
    const width = Math.max(40, (this.stream.columns || 120) - 1);
    this.#controls.write(`\r\x1b[2K${formatProgressLine(snapshot).slice(0, width)}`);
    this.#drawn = true;
  }

  /** A line that must stay in the output (an item finished, a pause): above the status line. */
  log(line: string, snapshot?: ProgressSnapshot): void {
    if (this.isTTY) {
      this.#controls.write("\r\x1b[2K");
      this.stream.write(`${line}\n`);
      if (snapshot) this.update(snapshot, true);
    } else {
      this.stream.write(`${line}\n`);
    }
  }

  /** Leaves the last status line on screen (TTY) or prints it once (plain). */
  finish(snapshot: ProgressSnapshot): void {
    if (this.isTTY) {
      this.update(snapshot, true);
      if (this.#drawn) this.stream.write("\n");
    } else {
      this.stream.write(`${formatProgressLine(snapshot)}\n`);
    }
  }
}
