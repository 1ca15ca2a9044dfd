import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { defineConfig } from "vitest/config";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Each file's seconds in a recent clean-clone CI (.ci/file-seconds.json: the file-seconds.json
 * .ci/run writes beside its report, or .ci/file-seconds.mjs's from a CI log). Files start longest first within a group of tiers (a groupOrder), across
 * its projects: vitest's own order in a clean clone — no results cache — is the projects one after
 * the other, larger files first, so an 82 s file of few lines started last and a tier waited on it
 * with a worker idle. A file not in the table (under 3 s) keeps vitest's order after the listed ones.
 */
const FILE_SECONDS: Record<string, number> = JSON.parse(
  readFileSync(new URL("./.ci/file-seconds.json", import.meta.url), "utf8"),
);

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const seconds = (spec: TestSpecification) =>
      FILE_SECONDS[relative(spec.project.config.root, spec.moduleId)] ?? 0;
    const group = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    // Array.prototype.sort is stable: unlisted files keep vitest's order among themselves.
    return (await super.sort(files)).sort((a, b) => group(a) - group(b) || seconds(b) - seconds(a));
  }
}

/**
 * Suites where the process, the clock or a real peer is the subject: chaos (kill -9, signals,
 * races), the conformance harnesses (the real Agent SDK and Claude Code) and Redis. They run as
 * a tier of their own after the rest, one file at a time, so their timing is not squeezed by
 * neighbours on a 2-core machine.
 */
const HEAVY = [
  "test/chaos/**/*.test.ts",
  "test/conformance/**/*.test.ts",
  "test/trust-corpus/races.test.ts",
  "test/cli-batch-queue*.test.ts",
  "test/queue-*.test.ts",
];

/**
 * Heavy files whose verdict is the end state alone — every item once, the clean run's tree, a
 * typed ending, bytes on disk, a session whole after a signal — not a clock: random kill -9 loops
 * and fault mixes, kills at points the simulator holds, a usage limit on a skip-ahead clock, real
 * clients' whole sessions against 150 s budgets. Each uses its own temp dirs, its own simulator
 * and its own Redis on a free port. They run three at a time, beside the corpora (in the serial
 * tier they were about 200 s of one core). What stays serial judges a clock or needs processes
 * to overlap: deadlines of a second or two, a worker frozen past its lock, resumes racing on a
 * lock only while the one that runs is still slow, the conformance suites' timed peer messages
 * (run beside each other, query-methods' result moved against the Agent SDK's /model echo: a race
 * on the peer's side that a neighbour's load tips).
 * The 4-process lock race (exclusive-locks-cli-race) is judged by its end state too, but its
 * 200 CLI starts ran past 180 s beside another file: it stays serial.
 */
const PAIRED = [
  "test/chaos/kill-resume.test.ts",
  "test/chaos/batch-apply-kill.test.ts",
  "test/chaos/whole-batch-failures.test.ts",
  "test/chaos/sim-faults.test.ts",
  // Judged by its end state (every item once); a worker starved past its 2 s lock only re-runs items.
  "test/cli-batch-queue-hosts.test.ts",
  // R-B1's queue cases judged by their end state: results, refusals, the state left, retries to
  // --attempts. Its cases on a clock (kills, a frozen worker, Redis restarts) stay serial.
  "test/cli-batch-queue-end-state.test.ts",
  // R-B1, R-M1: judged by what the items' results and Redis hold and one MCP server pid per worker.
  "test/cli-batch-queue-mcp.test.ts",
  // R-B6: judged by results.jsonl's structured outputs, the requests' format and a refused re-attach.
  "test/cli-batch-queue-json-schema.test.ts",
  // R-B7: judged by the requests sent and reduce.json; the kill lands while the simulator holds the reduce.
  "test/cli-batch-queue-reduce.test.ts",
  // R-B4: judged by the journal, applies.log and the producer's tree; the worker and the CLI run in
  // this process, Redis on a port of its own.
  "test/cli-batch-queue-retry-conflicts.test.ts",
  // R-S12: "mid-search" is read from /proc rchar; the assertion is never a duration.
  "test/chaos/signal-during-search.test.ts",
  "test/chaos/encodings.test.ts",
  "test/chaos/usage-limit-reset.test.ts",
  // R-R1–R-R3: any typed ending is a pass; its per-session hang watchdog is 43 s around 2 s deadlines.
  "test/chaos/hostile-model.test.ts",
  // The simulator holds the request the kill lands in: the moment is a state, not a time.
  "test/chaos/batch-reduce-kill.test.ts",
  "test/chaos/sub-agents-kill-resume.test.ts",
  "test/conformance/sim-real-clients.test.ts",
  // R-R5: the racer that takes the lock holds it until the test releases it, so which racer wins
  // and when the others ask never decide the verdict (exactly one holder, the rest refused by it).
  "test/chaos/exclusive-locks.test.ts",
  // A README against the allowlist: no process at all.
  "test/conformance/*/readme-differences.test.ts",
];

/**
 * The attack corpora: long (30–40 s a file) but the clock is not what they judge — their
 * deadlines are hang watchdogs of 30 s to 4 min around cases that end in under a second, and
 * their controls prove an old engine is *still* running after a few seconds, which load only
 * makes surer. They run in one tier with PAIRED (one at a time they added about 150 s to the
 * serial tier); the corpus's races stay in the serial tier. The tier runs three files at a time:
 * two at a time kept the 2 cores 83 % busy (362 CPU-s of files in 217 s of an idle CI); all of
 * its 27 files passed three at a time at load 15–22 but one 30 s case whose file takes 9 s idle.
 */
const CORPORA = [
  "test/trust-corpus/**/*.test.ts",
  "test/permissions-corpus.test.ts",
  "test/pattern-bounds.test.ts",
];

/**
 * The packages' own unit tests. They run in one tier with per-file isolation off: each of the two
 * workers keeps its process and module cache from file to file instead of starting a fresh
 * process and importing the packages again for every file (51 small files: 150–170 s → 45–47 s
 * at the same load). No file changes module state without restoring it (process.env is saved
 * and put back; module caches are keyed by input).
 */
const UNIT = ["packages/*/src/**/*.test.ts", "apps/*/src/**/*.test.ts"];

/**
 * End-to-end files that run the CLI only in this process (runCliInProcess, startCliInProcess, the
 * simulator in-process; no spawned CLI): they run in the unit tier, sharing a process from file
 * to file. The command path reads and changes no process-wide state (cli.ts: streams, environment
 * and working directory come in its context), each file uses its own temp dirs and simulator, and
 * their support modules hold no state. Importing the packages' sources again in a fresh process
 * was most of what each file spent: 20 of them took 94.7 CPU-s in a process each and 60.4 CPU-s
 * sharing (356 s → 189 s of wall time at the same load). cli-mcp (real MCP servers, one killed
 * mid-call) ran into its 30 s timeout once at load 18 this way: it keeps a process of its own.
 */
const IN_PROCESS = [
  "test/checkout-state.test.ts",
  "test/claude-flags-parity.test.ts",
  "test/coding-loop.test.ts",
  "test/cli-add-dir-memory.test.ts",
  "test/cli-agent-context.test.ts",
  "test/cli-agent-flag.test.ts",
  "test/cli-api-key-helper.test.ts",
  "test/cli-background-work.test.ts",
  "test/cli-batch-background-shell.test.ts",
  "test/cli-batch-base-moved.test.ts",
  "test/cli-batch-cache.test.ts",
  "test/cli-batch-control.test.ts",
  "test/cli-batch-isolate.test.ts",
  "test/cli-batch-reduce-limits.test.ts",
  "test/cli-batch-reduce.test.ts",
  "test/cli-batch-retry-conflicts.test.ts",
  "test/cli-batch-web-search.test.ts",
  "test/cli-batch.test.ts",
  "test/cli-compact.test.ts",
  "test/cli-fan-out.test.ts",
  "test/cli-hooks.test.ts",
  "test/cli-json-schema-constraints.test.ts",
  "test/cli-limits.test.ts",
  "test/cli-loop-flags.test.ts",
  "test/cli-mcp-scopes.test.ts",
  "test/cli-minimal-modes.test.ts",
  "test/cli-model-timeouts.test.ts",
  "test/cli-pause-turn.test.ts",
  "test/cli-prompt-hooks.test.ts",
  "test/cli-report-batch-reduce.test.ts",
  "test/cli-report-batch-structured.test.ts",
  "test/cli-report-batch.test.ts",
  "test/cli-report-session.test.ts",
  "test/cli-settings.test.ts",
  "test/cli-state-damage.test.ts",
  "test/cli-state-dir.test.ts",
  "test/cli-stop-failure-hook.test.ts",
  "test/cli-stream-json-flags.test.ts",
  "test/cli-worktree.test.ts",
  "test/disk-full.test.ts",
  "test/sandbox-sub-agents.test.ts",
  "test/state-and-secrets.test.ts",
  // R-R7: the Ctrl+C is the command's abort signal, given as the output shows the Nth item done
  // (in this process, so no delivery delay), and the verdicts are what batch.json, report.json and
  // the simulator's request log hold; its paced replies (30 ms an event) are idle time, not CPU —
  // 24 s of the serial tier's single core.
  "test/chaos/settings-kept.test.ts",
  "test/stream-json-compat.test.ts",
  "test/terminal-views.test.ts",
  "test/untrusted-sandbox-setting.test.ts",
];

/**
 * End-to-end files that start no process at all and change no process-wide state: checks over
 * the sources, READMEs, manifests and exports, the library's own contracts and the compatibility
 * clients against the simulator in this process. Each took 0.5–2 CPU-s in the main tier, most of
 * it starting a process and importing the packages again; in the unit tier they share both.
 */
const NO_PROCESS = [
  "test/batch-ledger-contract.test.ts",
  "test/compat-ai-sdk.test.ts",
  "test/compat-langchain.test.ts",
  "test/dependency-direction.test.ts",
  "test/docs-paths.test.ts",
  "test/error-exit-codes.test.ts",
  "test/error-family.test.ts",
  "test/exports-snapshot.test.ts",
  "test/issue-citations.test.ts",
  "test/message-batch-rounds.test.ts",
  "test/model-table-copies.test.ts",
  "test/packaging.test.ts",
  "test/request-prefix-writer.test.ts",
  "test/unused-exports.test.ts",
];

/**
 * Package tests that start worker threads, judge deadlines of a second or two, or run for
 * seconds: they keep a process of their own (in the main tier), so timers and handles left by
 * another file cannot delay them.
 */
const UNIT_ISOLATED = [
  "packages/orchestrator/src/agent-pool.test.ts",
  "packages/batch/src/batch-executor.test.ts",
  "packages/orchestrator/src/pool-shutdown.test.ts",
  "packages/orchestrator/src/main-session.test.ts",
  "packages/orchestrator/src/fork-cache.test.ts",
  "packages/orchestrator/src/sub-agent-continuation.test.ts",
  "packages/orchestrator/src/hung-model.test.ts",
  "packages/sdk/src/query.test.ts",
  "packages/sdk/src/query-background-bash.test.ts",
  "packages/sdk/src/query-background-agents.test.ts",
  "packages/sdk/src/query-send-message.test.ts",
  "packages/sdk/src/query-forward-subagent-text.test.ts",
  "packages/sdk/src/query-mcp.test.ts",
  "packages/sdk/src/session-management.test.ts",
  "packages/sdk/src/agent-sdk-values.test.ts",
  "packages/sdk/src/query-web-search.test.ts",
  "packages/sdk/src/mcp-on-demand.test.ts",
  "packages/sdk/src/query-agent-tool-use-result.test.ts",
  "packages/compaction/src/long-session.test.ts",
  "packages/mcp/src/connect-mcp-servers.test.ts",
  "packages/tools/src/tools/bash.test.ts",
  "packages/tools/src/tools/write-race.test.ts",
  "packages/tools/src/tools/read-pdf.test.ts",
  "packages/tools/src/sandbox/sandbox-sockets.test.ts",
  "packages/tools/src/sandbox/sandbox-outside-links.test.ts",
  "packages/loop-core/src/model-client-time-limits.test.ts",
  "packages/loop-core/src/model-client-gate.test.ts",
  "packages/loop-core/src/model-client.test.ts",
  "packages/batch/src/item-isolation.test.ts",
];

// Tests import workspace packages through their "source" export condition (STYLE.md §10),
// so they run against src/*.ts without a build; worker-thread tests load the built dist/.
export default defineConfig({
  resolve: { conditions: ["source"] },
  ssr: { resolve: { conditions: ["source"] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Each file's CPU seconds, when the CI's reporter asks (.ci/file-cpu-setup.mjs).
    setupFiles: ["./.ci/file-cpu-setup.mjs"],
    sequence: { sequencer: LongestFirst },
    // vitest runs node with `--conditions source`, so a dependency that publishes a "source"
    // condition (eventsource and eventsource-parser, under the AI SDK of the compatibility suite
    // and under @modelcontextprotocol/sdk) would load as .ts: vite transforms it, and the packages
    // that import it, instead of node.
    server: {
      deps: {
        inline: [
          /\/node_modules\/ai\//,
          /\/node_modules\/@ai-sdk\//,
          /\/node_modules\/@modelcontextprotocol\/sdk\//,
          /\/node_modules\/eventsource(-parser)?\//,
        ],
      },
    },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [...UNIT, ...IN_PROCESS, ...NO_PROCESS],
          exclude: ["**/node_modules/**", ...UNIT_ISOLATED],
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "main",
          include: ["test/**/*.test.ts", ...UNIT_ISOLATED],
          exclude: ["**/node_modules/**", ...HEAVY, ...CORPORA, ...IN_PROCESS, ...NO_PROCESS],
          // Most files wait on sockets, child processes, threads and timers: three at a time on two
          // cores. Two at a time kept the cores 71 % busy through the tier (334 CPU-s of files in
          // 234 s of an idle CI); a third fills the waits (a model of the files' seconds and CPU
          // from that CI puts the tier at about 166 s). vitest's default is one fewer than the cores.
          maxWorkers: 3,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "corpus",
          include: CORPORA,
          exclude: ["**/node_modules/**", ...HEAVY],
          maxWorkers: 3,
          // One group with "paired": their three workers are shared, so neither tier waits on the
          // other's last file (vitest runs projects of one groupOrder together).
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: "paired",
          include: PAIRED,
          exclude: ["**/node_modules/**"],
          maxWorkers: 3,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: "heavy",
          include: HEAVY,
          exclude: ["**/node_modules/**", ...PAIRED, ...IN_PROCESS],
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
