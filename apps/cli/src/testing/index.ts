/**
 * Helpers for end-to-end tests that spawn the BUILT `forkloop` binary (`apps/cli/dist/main.js`;
 * build first with `npx turbo run build`). Exported as `@forkloop/cli/testing`.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  batchesDir,
  projectState,
  type StreamJsonLine,
  sessionsDir,
  streamJsonLineSchema,
} from "@forkloop/sdk";

/** Absolute path of the built CLI entry. */
export const CLI_PATH = fileURLToPath(new URL("../../dist/main.js", import.meta.url));

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliOptions {
  readonly cwd: string;
  /** Added to a clean environment: no ANTHROPIC_* from the caller, simulator latency off. */
  readonly env?: Record<string, string>;
  readonly stdin?: string;
}

/** The environment a test run gets: the caller's PATH/HOME, never a real API key. */
export function cliEnv(extra: Record<string, string> = {}, home?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ["PATH", "HOME", "TMPDIR", "LANG"])
    if (process.env[key] !== undefined) env[key] = process.env[key];
  // HOME = the test's directory, so the user's own settings and memory files never leak in.
  if (home !== undefined) env.HOME = home;
  return { ...env, FORKLOOP_SIM_LATENCY: "none", ...extra };
}

function assertBuilt(): void {
  if (!existsSync(CLI_PATH)) throw new Error(`${CLI_PATH} is missing: run \`npx turbo run build\` first`);
}

/** Starts the CLI; the caller reads its output and waits for `exited`. */
export function startCli(
  args: readonly string[],
  options: CliOptions,
): {
  child: ChildProcess;
  exited: Promise<CliResult>;
  stdout: () => string;
  stderr: () => string;
} {
  assertBuilt();
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    cwd: options.cwd,
    env: cliEnv(options.env, options.cwd),
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  if (options.stdin !== undefined) child.stdin?.end(options.stdin);
  else child.stdin?.end();
  const exited = new Promise<CliResult>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, exited, stdout: () => stdout, stderr: () => stderr };
}

export type StartedCli = ReturnType<typeof startCli>;

/**
 * Ends every CLI in `started` that is still running and waits for each (emptying the list), so
 * no worker or producer outlives its test. SIGCONT first: a test may have frozen one (SIGSTOP).
 */
export async function stopStarted(started: StartedCli[]): Promise<void> {
  for (const cli of started.splice(0)) {
    if (cli.child.exitCode === null && cli.child.signalCode === null) {
      cli.child.kill("SIGCONT");
      cli.child.kill("SIGKILL");
    }
    await cli.exited;
  }
}

/** `items.jsonl` in `dir` with `count` items, "task 1" … "task N" (one JSON string per line). */
export async function writeTaskItems(dir: string, count: number): Promise<void> {
  const lines = Array.from({ length: count }, (_, index) => JSON.stringify(`task ${index + 1}`));
  await writeFile(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
}

/** Runs the CLI to completion. */
export function runCli(args: readonly string[], options: CliOptions): Promise<CliResult> {
  return startCli(args, options).exited;
}

/** Resolves once `read()` satisfies `test` (polled as output arrives); rejects if the child exits first. */
export async function waitForOutput(
  child: ChildProcess,
  read: () => string,
  test: (text: string) => boolean,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const text = read();
      if (test(text)) {
        cleanup();
        resolve(text);
      }
    };
    const onExit = () => {
      cleanup();
      reject(new Error(`the CLI exited before the expected output; got:\n${read()}`));
    };
    const cleanup = () => {
      child.stdout?.off("data", check);
      child.stderr?.off("data", check);
      child.off("exit", onExit);
    };
    child.stdout?.on("data", check);
    child.stderr?.on("data", check);
    child.on("exit", onExit);
    check();
  });
}

/** A `forkloop sim` process for a test: its URL, the env that points the CLI at it, its request log. */
export async function startSimProcess(cwd: string, args: readonly string[] = []) {
  const sim = startCli(["sim", "--port", "0", ...args], { cwd });
  await waitForOutput(sim.child, sim.stderr, (text) => text.includes("listening"));
  const url = sim.stdout().trim().split("\n")[0] ?? "";
  return {
    url,
    env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url },
    /** The simulator's request records (`GET /_sim/requests`). */
    async requests(): Promise<
      {
        path: string;
        status: number;
        /** The `x-forkloop-query-source` header: `sdk` for the main loop, `compact`, `agent:…`. */
        querySource: string | null;
        fault: string | null;
        rawBody: string;
        usage: { cache_read_input_tokens: number; cache_creation_input_tokens: number } | null;
        startedAt: number;
        /** When the response's first byte went out: a cache entry it writes is readable from then (R-F4). */
        firstByteAt: number | null;
        endedAt: number | null;
      }[]
    > {
      const response = await fetch(`${url}/_sim/requests`);
      return (await response.json()) as never;
    },
    async stop(): Promise<void> {
      sim.child.kill("SIGINT");
      await sim.exited;
    },
  };
}

export type SimProcess = Awaited<ReturnType<typeof startSimProcess>>;

/** Runs `body` against a fresh `forkloop sim` process (started with `args`) and always stops it. */
export async function withSimProcess<T>(
  cwd: string,
  args: readonly string[],
  body: (sim: SimProcess) => Promise<T>,
): Promise<T> {
  const sim = await startSimProcess(cwd, args);
  try {
    return await body(sim);
  } finally {
    await sim.stop();
  }
}

/** Writes a scenario file whose unmatched requests get `fallbackText`; returns its path. */
export async function writeScenario(
  path: string,
  rules: readonly Record<string, unknown>[],
  fallbackText: string,
): Promise<string> {
  await writeFile(
    path,
    JSON.stringify({ rules, fallback: { content: [{ type: "text", text: fallbackText }] } }),
  );
  return path;
}

/** A `--output-format stream-json` stdout as validated lines (a line off the schema throws). */
export function streamJsonLines(stdout: string): StreamJsonLine[] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => streamJsonLineSchema.parse(JSON.parse(line)));
}
export { type RedisServer, type RedisServerOptions, startRedisServer } from "./redis-server.js";

/**
 * Where a test's batch keeps its state: the project's state directory under the user's forkloop
 * directory (state-dirs.ts), HOME being the test's directory as `cliEnv` sets it.
 */
export function batchStateDir(cwd: string, id: string, home = cwd): string {
  return join(batchesDir(projectState({ cwd, env: { HOME: home } })), id);
}

/** Where a test's `forkloop run` sessions go, as `batchStateDir` finds batches. */
export function sessionsStateDir(cwd: string, home = cwd): string {
  return sessionsDir(projectState({ cwd, env: { HOME: home } }));
}
