/**
 * `npm run bench -- subagent-cache` (R-K3, R-F3, R-F4): how much of a sub-agent fan-out's input is
 * read from the prompt cache, for both kinds of sub-agent. One reply calls the Agent tool 8 times
 * in one turn; every sub-agent answers with a text. A `general-purpose` sub-agent is a
 * conversation of its own (its system prompt, its tools, its task alone): forkloop warms the
 * type's prefix once, so the other 7 instances read it; a `fork` continues the parent's
 * conversation and reads the parent's prefix. Side by side in one run: `forkloop run` and the real
 * `claude -p` (Claude Code CLI, pinned, installed at bench time into the conformance peers'
 * ignored directory), which sends its 8 general-purpose requests at once (it has no `fork` type).
 * The figure is the share of the sub-agents' input tokens (uncached + cache writes + cache reads)
 * read from the cache, from the simulator's records; each run has a simulator of its own (a cold
 * cache) and a home of its own.
 */
import { execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type Brain, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare, percentile } from "./harness.js";
import { CLAUDE, environment } from "./startup.bench.js";

const ROUNDS = 3;
const FAN_OUT = 8;
const CLI = fileURLToPath(new URL("../../apps/forkloop/bin/forkloop.js", import.meta.url));
const ENSURE_PEERS = fileURLToPath(
  new URL("../../test/conformance/support/ensure-peers.mjs", import.meta.url),
);

type Side = "claude -p" | "forkloop run";
type Kind = "general-purpose" | "fork";
const TASK = /Check part (\d+) of the fan-out\./;

const text = (value: string) => ({
  content: [{ type: "text" as const, text: value }],
  adaptiveThinking: false,
});

function brainFor(kind: Kind): Brain {
  return (request) => {
    const user = request.lastUserText ?? "";
    if (TASK.test(user)) return text(`Part ${TASK.exec(user)?.[1]} is fine.`);
    if (request.lastToolResults.length > 0) return text("All parts are fine.");
    const name = ["Agent", "Task"].find((tool) => request.toolNames.includes(tool));
    if (!user.includes("fan-out run") || name === undefined) return text("ok");
    return {
      content: Array.from({ length: FAN_OUT }, (_, index) => ({
        type: "tool_use" as const,
        name,
        input: {
          description: `part ${index}`,
          prompt: `Check part ${index} of the fan-out.`,
          subagent_type: kind,
          run_in_background: false,
        },
      })),
      adaptiveThinking: false,
    };
  };
}

interface Usage {
  readonly input_tokens?: number;
  readonly cache_creation_input_tokens?: number;
  readonly cache_read_input_tokens?: number;
}

interface RunFigures {
  /** Share of the sub-agents' input tokens read from the cache (0–1). */
  readonly share: number;
  /** Sub-agent requests whose cache read is above zero, of all sub-agent requests. */
  readonly reading: number;
  readonly requests: number;
  /** Share of the first sub-agent request read from the cache: only the parent's prefix is there yet. */
  readonly firstShare: number;
}

/**
 * A sub-agent's request: a user (or system) message's text holds one of the fan-out's tasks — the
 * whole conversation of a general-purpose sub-agent, a fork's directive after the parent's
 * history. The parent's own requests hold the tasks only in its Agent calls' input.
 */
function isSubAgent(rawBody: string): boolean {
  const body = JSON.parse(rawBody) as { messages?: { role: string; content: unknown }[] };
  return (body.messages ?? []).some((message) => {
    if (message.role === "assistant") return false;
    const blocks =
      typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    return (blocks as { type: string; text?: string }[]).some(
      (block) => block.type === "text" && TASK.test(block.text ?? ""),
    );
  });
}

async function oneRun(side: Side, kind: Kind, root: string, run: number): Promise<RunFigures> {
  const sim = await startSimulator({
    brain: brainFor(kind),
    latency: { default: { ttftMs: 60, prefillTokensPerSecond: 1e9, outputTokensPerSecond: 1e5 } },
    recordLimit: 200,
  });
  const home = join(root, `run-${run}`);
  const work = join(home, "work");
  mkdirSync(join(home, "tmp"), { recursive: true });
  mkdirSync(work, { recursive: true });
  const prompt = `fan-out run ${run}: check the ${FAN_OUT} parts with sub-agents.`;
  const [command, args] =
    side === "claude -p" ? [CLAUDE, ["-p", prompt]] : [process.execPath, [CLI, "run", prompt]];
  try {
    const child = spawn(command, args, {
      cwd: work,
      stdio: "ignore",
      env: environment(home, sim.url),
    });
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
    const subAgents = sim
      .requests()
      .filter(
        (record) => record.path === "/v1/messages" && record.status === 200 && isSubAgent(record.rawBody),
      )
      .sort((a, b) => a.startedAt - b.startedAt)
      .map((record) => (record.usage ?? {}) as Usage);
    if (code !== 0 || subAgents.length < FAN_OUT)
      throw new Error(`${side} ${kind} run ${run}: exit ${code}, ${subAgents.length} sub-agent requests`);
    const inputOf = (usage: Usage) =>
      (usage.input_tokens ?? 0) +
      (usage.cache_creation_input_tokens ?? 0) +
      (usage.cache_read_input_tokens ?? 0);
    const shareOf = (usages: readonly Usage[]) => {
      const total = usages.reduce((sum, usage) => sum + inputOf(usage), 0);
      const read = usages.reduce((sum, usage) => sum + (usage.cache_read_input_tokens ?? 0), 0);
      return total === 0 ? 0 : read / total;
    };
    return {
      share: shareOf(subAgents),
      firstShare: shareOf(subAgents.slice(0, 1)),
      reading: subAgents.filter((usage) => (usage.cache_read_input_tokens ?? 0) > 0).length,
      requests: subAgents.length,
    };
  } finally {
    await sim.close();
  }
}

export async function run(): Promise<BenchResult[]> {
  execFileSync(process.execPath, [ENSURE_PEERS], { stdio: "ignore" });
  const root = mkdtempSync(join(tmpdir(), "forkloop-bench-subagent-cache-"));
  const configs = [
    ["claude -p", "general-purpose"],
    ["forkloop run", "general-purpose"],
    ["forkloop run", "fork"],
  ] as const;
  const figures = new Map<string, RunFigures[]>(configs.map(([side, kind]) => [`${side} ${kind}`, []]));
  try {
    let next = 0;
    // Alternating rounds, so load shifts on the machine hit every configuration.
    for (let round = 0; round < ROUNDS; round++) {
      for (const [side, kind] of configs)
        figures.get(`${side} ${kind}`)?.push(await oneRun(side, kind, root, next++));
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const median = (key: string, pick: (f: RunFigures) => number) =>
    percentile((figures.get(key) ?? []).map(pick), 50);
  const percent = (key: string, pick: (f: RunFigures) => number = (f) => f.share) =>
    Math.round(median(key, pick) * 1000) / 10;
  const readers = (key: string) =>
    `${median(key, (f) => f.reading)} of ${median(key, (f) => f.requests)} requests read from the cache, the first one ${percent(key, (f) => f.firstShare)} % (the parent's prefix)`;
  const notes = (baseline: string, candidate: string) =>
    `median of ${ROUNDS} alternating runs, ${FAN_OUT} Agent calls in one reply, a cold simulator per run; ${baseline}: ${readers(baseline)}; ${candidate}: ${readers(candidate)}`;
  return [
    compare(
      `sub-agent cache: ${FAN_OUT} general-purpose sub-agents, forkloop run vs claude -p (higher is better)`,
      "share of the sub-agents' input tokens read from the cache",
      "%",
      { label: "claude -p", value: percent("claude -p general-purpose") },
      { label: "forkloop run", value: percent("forkloop run general-purpose") },
      notes("claude -p general-purpose", "forkloop run general-purpose"),
    ),
    compare(
      `sub-agent cache: forkloop run, ${FAN_OUT} fork vs ${FAN_OUT} general-purpose sub-agents`,
      "share of the sub-agents' input tokens read from the cache",
      "%",
      { label: "general-purpose (own conversation)", value: percent("forkloop run general-purpose") },
      { label: "fork (the parent's prefix)", value: percent("forkloop run fork") },
      notes("forkloop run general-purpose", "forkloop run fork"),
    ),
  ];
}
