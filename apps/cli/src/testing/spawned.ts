/**
 * Helpers for end-to-end tests that spawn the BUILT `forkloop` binary (`apps/cli/dist/main.js`;
 * build first with `npx turbo run build`): for tests whose subject is the process — signals,
 * the real exit, killed workers, installs. Everything else runs in-process (in-process.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { type SimHandle, simHandle, withStopped } from "./sim-handle.js";

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
  /** A command prefix the CLI runs under, e.g. `ip netns exec HOST` (network-hosts.ts). */
  readonly launcher?: readonly string[];
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
  const [command, ...prefix] = [...(options.launcher ?? []), process.execPath];
  const child = spawn(command as string, [...prefix, CLI_PATH, ...args], {
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

/**
 * Starts the CLI and adds it to `started`, so the test's `stopStarted(started)` (an afterEach)
 * ends it even when the test failed or timed out while it ran — a queue producer left waiting for
 * workers would otherwise run on for as long as the machine does.
 */
export function startTracked(
  started: StartedCli[],
  args: readonly string[],
  options: CliOptions,
): StartedCli {
  const cli = startCli(args, options);
  started.push(cli);
  return cli;
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
export async function startSimProcess(cwd: string, args: readonly string[] = []): Promise<SimHandle> {
  const sim = startCli(["sim", "--port", "0", ...args], { cwd });
  await waitForOutput(sim.child, sim.stderr, (text) => text.includes("listening"));
  return simHandle(sim.stdout(), () => {
    sim.child.kill("SIGINT");
    return sim.exited;
  });
}

export type SimProcess = SimHandle;

/** Runs `body` against a fresh `forkloop sim` process (started with `args`) and always stops it. */
export async function withSimProcess<T>(
  cwd: string,
  args: readonly string[],
  body: (sim: SimProcess) => Promise<T>,
): Promise<T> {
  return withStopped(await startSimProcess(cwd, args), body);
}
