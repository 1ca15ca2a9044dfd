import { join } from "node:path";
import type { Tool } from "@forkloop/loop-core";
import type { AgentPool, SubAgentBashOptions } from "@forkloop/orchestrator";
import type { ModelSource } from "@forkloop/sdk";
import type { Settings } from "@forkloop/tools";
import { createBatchExecutor } from "./batch-executor.js";
import { type ReduceJournalMirror, type ReduceOutcome, runReduce } from "./batch-reduce.js";
import type { BatchSpec } from "./batch-store.js";
import type { ItemState } from "./job-backend.js";
import { plural } from "./plural.js";

/**
 * R-B7: the reduce step of a batch whose map is settled, on this host — its own executor on the
 * map's prefix (the batch's tools and system prompt, so its first request reads what the items
 * wrote to the cache; no `--json-schema`: it answers in prose, no item journal), journaled in
 * `dir` (and in `mirror`, a queued batch's Redis), said on `log` a line when it starts and ends.
 * A local batch runs it after its pool's items; a `--queue` batch's producer after every worker's.
 */
export async function runReduceStep(options: {
  readonly spec: BatchSpec & { readonly reduce: string };
  readonly dir: string;
  readonly states: readonly ItemState[];
  readonly source: ModelSource;
  readonly settings: Settings;
  readonly bash: SubAgentBashOptions;
  readonly mcpTools: readonly Tool[];
  readonly pool: AgentPool;
  readonly signal: AbortSignal;
  readonly log: (line: string) => void;
  readonly mirror?: ReduceJournalMirror;
}): Promise<ReduceOutcome> {
  const { spec, log } = options;
  const { outputSchema: _items, ...reduceSpec } = spec;
  const reducer = await createBatchExecutor({
    spec: reduceSpec,
    cwd: spec.cwd,
    settings: options.settings,
    source: options.source,
    pool: options.pool,
    bash: options.bash,
    mcpTools: options.mcpTools,
    transcriptsDir: join(options.dir, "transcripts"),
    onNotice: log,
  });
  log(`reduce: running over the results of ${plural(options.states.length, "item")}`);
  const reduce = await runReduce({
    dir: options.dir,
    prompt: spec.reduce,
    states: options.states,
    executor: reducer,
    signal: options.signal,
    ...(options.mirror === undefined ? {} : { mirror: options.mirror }),
    log,
  });
  const record = reduce.record;
  log(
    reduce.kind === "kept" && record.status === "succeeded"
      ? "reduce: its answer over these results is kept from an earlier run"
      : reduce.kind === "interrupted"
        ? "reduce: interrupted (a resume runs it again, and nothing else)"
        : record.status === "succeeded"
          ? `ok     reduce (${plural(record.result?.turns ?? 0, "turn")}, $${(record.result?.costUsd ?? 0).toFixed(4)})`
          : `FAILED reduce ${record.error?.code}: ${record.error?.message}`,
  );
  return reduce;
}
