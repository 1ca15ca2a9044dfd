/**
 * `npm run bench -- startup` (R-V2): one-shot runs side by side, the same task against the same
 * simulator — `forkloop run` beside `claude -p` (the real Claude Code CLI), and a one-shot program
 * calling `query()` from the installed `forkloop` package (its bundle) beside the same program on
 * the real Agent SDK; both peers pinned and installed at bench time into the conformance peers'
 * ignored directory. Measured from the process's spawn: its first model request, its first
 * sub-agent's first request, its exit, and the peak memory of its process tree. Runs alternate
 * between the sides so load shifts hit all; each run has a home of its own (no settings, no
 * session history) and the variables that keep Claude Code offline.
 */
import { execFileSync, fork, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { type BenchResult, compare, percentile } from "./harness.js";
import { importTimes } from "./sdk.bench.js";
import type { StartupSimMessage } from "./startup-sim-process.js";

const ROUNDS = 7;
const CLI = fileURLToPath(new URL("../../apps/forkloop/bin/forkloop.js", import.meta.url));
const SIM_PROCESS = fileURLToPath(new URL("./startup-sim-process.js", import.meta.url));
const ENSURE_PEERS = fileURLToPath(
  new URL("../../test/conformance/support/ensure-peers.mjs", import.meta.url),
);
const FORKLOOP_BUNDLE = fileURLToPath(new URL("../../apps/forkloop/dist/index.js", import.meta.url));
const AGENT_SDK = fileURLToPath(
  new URL(
    "../../test/conformance/peers/node_modules/@anthropic-ai/claude-agent-sdk/sdk.mjs",
    import.meta.url,
  ),
);
/** A one-shot program: the SDK named by its first argument, the prompt by its second. */
const ONE_SHOT_PROGRAM = `const { query } = await import(process.argv[2]);
for await (const message of query({ prompt: process.argv[3], options: { cwd: process.cwd() } })) {
  if (message.type === "result" && message.is_error) process.exit(1);
}
`;
/** The real Claude Code CLI's binary, as the conformance peers install it. */
export const CLAUDE = fileURLToPath(
  new URL(
    `../../test/conformance/peers/node_modules/@anthropic-ai/claude-code-${process.platform}-${process.arch}/claude`,
    import.meta.url,
  ),
);

const SIDES = ["claude -p", "forkloop run", "Agent SDK query()", "forkloop query()"] as const;
/** `@forkloop/sdk query()`: the one-shot program on the workspace package as published (its bundle; sdk.bench.ts's side). */
export type Side = (typeof SIDES)[number] | "@forkloop/sdk query()";
const FORKLOOP_SDK = fileURLToPath(new URL("../../packages/sdk/bundle/index.js", import.meta.url));

function commandOf(side: Side, prompt: string, program: string): [string, string[]] {
  switch (side) {
    case "claude -p":
      return [CLAUDE, ["-p", prompt]];
    case "forkloop run":
      return [process.execPath, [CLI, "run", prompt]];
    case "Agent SDK query()":
      return [process.execPath, [program, AGENT_SDK, prompt]];
    case "forkloop query()":
      return [process.execPath, [program, FORKLOOP_BUNDLE, prompt]];
    case "@forkloop/sdk query()":
      return [process.execPath, [program, FORKLOOP_SDK, prompt]];
  }
}

export interface RunFigures {
  readonly firstRequestMs: number;
  readonly subAgentMs: number;
  readonly exitMs: number;
  readonly peakKb: number;
}

/** PSS of a process and its descendants (kB), from /proc. */
function treePssKb(root: number): number {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(/^PPid:\s+(\d+)/m.exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // Gone between the listing and the read.
    }
  }
  let total = 0;
  for (const queue = [root]; queue.length > 0; ) {
    const pid = queue.pop()!;
    try {
      total += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"))?.[1] ?? 0);
    } catch {
      // Exited.
    }
    queue.push(...(children.get(pid) ?? []));
  }
  return total;
}

async function startSim() {
  const child = fork(SIM_PROCESS, [], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  const arrivals = new Map<string, number>();
  const url = await new Promise<string>((resolve, reject) => {
    child.once("exit", (code) => reject(new Error(`the simulator process exited (${code})`)));
    child.on("message", (message: StartupSimMessage) => {
      if (message.type === "listening") resolve(message.url);
      else if (!arrivals.has(`${message.type}:${message.run}`))
        arrivals.set(`${message.type}:${message.run}`, message.at);
    });
  });
  return {
    url,
    arrivals,
    close: () =>
      new Promise<void>((resolve) => {
        child.once("exit", () => resolve());
        child.send("close");
      }),
  };
}

/** A one-shot run's environment: a home of its own, the simulator as endpoint, Claude Code offline. */
export function environment(home: string, url: string): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: home,
    TMPDIR: join(home, "tmp"),
    CLAUDE_CONFIG_DIR: join(home, ".claude"),
    FORKLOOP_HOME: join(home, ".forkloop"),
    ANTHROPIC_BASE_URL: url,
    ANTHROPIC_API_KEY: "sk-bench-startup",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    NO_COLOR: "1",
    FORKLOOP_SIM_LATENCY: "none",
  };
}

async function oneRun(
  side: Side,
  run: number,
  sim: Awaited<ReturnType<typeof startSim>>,
  root: string,
): Promise<RunFigures> {
  const home = join(root, `run-${run}`);
  const work = join(home, "work");
  mkdirSync(join(home, "tmp"), { recursive: true });
  mkdirSync(work, { recursive: true });
  writeFileSync(join(work, "part-one.txt"), "part one\n");
  const prompt = `startup run ${run}: check part one with a sub-agent.`;
  const [command, args] = commandOf(side, prompt, join(root, "one-shot.mjs"));
  const spawnedAt = performance.timeOrigin + performance.now();
  const child = spawn(command, args, { cwd: work, env: environment(home, sim.url), stdio: "ignore" });
  let peakKb = 0;
  const sampler = setInterval(() => {
    if (child.pid !== undefined) peakKb = Math.max(peakKb, treePssKb(child.pid));
  }, 25);
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  const exitMs = performance.timeOrigin + performance.now() - spawnedAt;
  clearInterval(sampler);
  const first = sim.arrivals.get(`first_request:${run}`);
  const subAgent = sim.arrivals.get(`sub_agent_request:${run}`);
  if (code !== 0 || first === undefined || subAgent === undefined)
    throw new Error(
      `${side} run ${run}: exit ${code}, first request ${first}, sub-agent request ${subAgent}`,
    );
  return { firstRequestMs: first - spawnedAt, subAgentMs: subAgent - spawnedAt, exitMs, peakKb };
}

/**
 * `rounds` one-shot runs of each side, alternating between them on one simulator after a warm-up
 * run each (file system caches). Exported for sdk.bench.ts's one-shot figure.
 */
export async function oneShotRuns<S extends Side>(
  sides: readonly S[],
  rounds = ROUNDS,
): Promise<Record<S, RunFigures[]>> {
  execFileSync(process.execPath, [ENSURE_PEERS], { stdio: "ignore" });
  const root = mkdtempSync(join(tmpdir(), "forkloop-bench-startup-"));
  writeFileSync(join(root, "one-shot.mjs"), ONE_SHOT_PROGRAM);
  const sim = await startSim();
  const figures = Object.fromEntries(sides.map((side) => [side, [] as RunFigures[]])) as Record<
    S,
    RunFigures[]
  >;
  try {
    let next = 0;
    for (const side of sides) await oneRun(side, next++, sim, root);
    for (let round = 0; round < rounds; round++) {
      for (const side of sides) figures[side].push(await oneRun(side, next++, sim, root));
    }
  } finally {
    await sim.close();
    rmSync(root, { recursive: true, force: true });
  }
  return figures;
}

export async function run(): Promise<BenchResult[]> {
  const figures = await oneShotRuns(SIDES);
  const median = (side: (typeof SIDES)[number], pick: (f: RunFigures) => number) =>
    percentile(figures[side].map(pick), 50);
  const notes = `median of ${ROUNDS} alternating one-shot runs each, one sub-agent call, the simulator in its own process`;
  const rows = (
    baseline: (typeof SIDES)[number],
    candidate: (typeof SIDES)[number],
    baselineLabel: string,
    goals: readonly string[],
  ) => {
    const what = `${candidate} vs ${baseline}`;
    const row = (
      name: string,
      metric: string,
      unit: string,
      pick: (f: RunFigures) => number,
      goal: string,
      scale = 1,
    ) =>
      compare(
        `startup: ${what}, ${name}`,
        metric,
        unit,
        { label: baselineLabel, value: median(baseline, pick) * scale },
        { label: candidate, value: median(candidate, pick) * scale },
        `${notes}; goal ${goal}`,
      );
    return [
      row(
        "spawn to first model request (lower is better)",
        "median",
        "ms",
        (f) => f.firstRequestMs,
        goals[0] ?? "—",
      ),
      row(
        "spawn to the first sub-agent's first request (lower is better)",
        "median",
        "ms",
        (f) => f.subAgentMs,
        goals[1] ?? "—",
      ),
      row("spawn to exit (lower is better)", "median", "ms", (f) => f.exitMs, "—"),
      row(
        "peak memory of the process tree (lower is better)",
        "PSS sampled every 25 ms, median of the runs' peaks",
        "MiB",
        (f) => f.peakKb,
        goals[2] ?? "—",
        1 / 1024,
      ),
    ];
  };
  const imports = importTimes(ROUNDS, pathToFileURL(FORKLOOP_BUNDLE).href);
  return [
    compare(
      "startup: import time, the installed forkloop package (bundled) vs the Agent SDK 0.3.333 (lower is better)",
      "await import() in a fresh process, median",
      "ms",
      { label: "@anthropic-ai/claude-agent-sdk", value: imports.agentSdkMs },
      { label: "forkloop (dist/index.js)", value: imports.forkloopMs },
      `median of ${ROUNDS} alternating fresh processes each; goal ≤ 1.0×`,
    ),
    ...rows("claude -p", "forkloop run", "claude -p 2.1.332", ["≤ 1.0×", "≤ 1.0×", "≤ 0.8×"]),
    ...rows("Agent SDK query()", "forkloop query()", "Agent SDK 0.3.333 query()", ["≤ 0.5×", "—", "—"]),
  ];
}
