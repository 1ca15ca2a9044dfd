/** One measured figure. Comparisons carry both sides and their ratio (candidate / baseline). */
export interface BenchResult {
  readonly name: string;
  readonly metric: string;
  readonly value: number;
  readonly unit: string;
  readonly comparison?: {
    readonly baseline: { readonly label: string; readonly value: number };
    readonly candidate: { readonly label: string; readonly value: number };
    /** candidate / baseline; the bench's `name` says which direction is better. */
    readonly ratio: number;
  };
  readonly notes?: string;
}

/** A comparison result whose headline value is the ratio candidate / baseline. */
export function compare(
  name: string,
  metric: string,
  unit: string,
  baseline: { label: string; value: number },
  candidate: { label: string; value: number },
  notes?: string,
): BenchResult {
  const ratio = baseline.value === 0 ? Number.NaN : candidate.value / baseline.value;
  return {
    name,
    metric,
    value: candidate.value,
    unit,
    comparison: { baseline, candidate, ratio },
    ...(notes === undefined ? {} : { notes }),
  };
}

/** Percentile (0–100) of a list of samples, nearest-rank. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

/** Runs `fn` `iterations` times after `warmup` runs; returns the per-run times in ms. */
export async function timeRuns(fn: () => Promise<unknown> | unknown, iterations: number, warmup = 2) {
  for (let index = 0; index < warmup; index++) await fn();
  const samples: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const start = performance.now();
    await fn();
    samples.push(performance.now() - start);
  }
  return samples;
}

/**
 * Like `timeRuns`, but each sample is the process's CPU time (user + system) for the run: on a
 * shared machine the wall time of CPU-bound code mostly measures waiting for a core.
 */
export async function cpuRuns(fn: () => Promise<unknown> | unknown, iterations: number, warmup = 2) {
  for (let index = 0; index < warmup; index++) await fn();
  const samples: number[] = [];
  for (let index = 0; index < iterations; index++) {
    const start = process.cpuUsage();
    await fn();
    const spent = process.cpuUsage(start);
    samples.push((spent.user + spent.system) / 1000);
  }
  return samples;
}

function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  if (Math.abs(value) >= 100) return value.toFixed(0);
  if (Math.abs(value) >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

/** The Markdown table printed by `npm run bench` and written beside the JSON. */
export function toMarkdown(results: readonly BenchResult[]): string {
  const lines = [
    "| benchmark | metric | value | baseline | candidate | ratio |",
    "|---|---|---|---|---|---|",
  ];
  for (const result of results) {
    const cmp = result.comparison;
    lines.push(
      [
        result.name,
        result.metric,
        `${formatNumber(result.value)} ${result.unit}`,
        cmp ? `${cmp.baseline.label}: ${formatNumber(cmp.baseline.value)}` : "",
        cmp ? `${cmp.candidate.label}: ${formatNumber(cmp.candidate.value)}` : "",
        cmp ? `${formatNumber(cmp.ratio)}×` : "",
      ]
        .join(" | ")
        .replace(/^/, "| ")
        .concat(" |"),
    );
  }
  return lines.join("\n");
}
