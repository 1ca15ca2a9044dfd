import { execFileSync, spawn } from "node:child_process";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { runCli, startCliInProcess } from "@forkloop/cli/testing";
import type { RequestRecord } from "@forkloop/sim";
import { isolatedEnv, makeRunDirs, type RunDirs } from "../support/isolated-run.js";
import type { ScriptedServer } from "../support/scripted-server.js";
import { type CliScenario, type CliStep, scriptOf } from "./scenario.js";

export type Side = "claude" | "forkloop";

export interface StepResult {
  args: readonly string[];
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Everything one side's run of one scenario left to compare. */
export interface CliRun extends StepResult {
  side: Side;
  dirs: RunDirs;
  /** The steps before the compared one (`scenario.before`). */
  before: StepResult[];
  requests: RequestRecord[];
  scriptFailures: string[];
  /** Each hook call's input, in the order they ran. */
  hookInputs: Record<string, unknown>[];
  /**
   * The working directory's files after the run whose content the run changed (absent: deleted;
   * the repository's `.git` left out).
   */
  changedFiles: Record<string, string | null>;
  /** With `scenario.git`: the worktrees (`git worktree list --porcelain`, a lock's reason left out) and branches after the run. */
  gitState: string;
  /** With `scenario.git`: the names of the worktrees under `.claude/worktrees` the command line did not name. */
  madeUpWorktreeNames: string[];
}

const DEFAULT_TIMEOUT_MS = 120_000;

/** Runs a scenario on one side: `claude <args>` spawned, or `forkloop <args>` in this process. */
export async function runScenario(options: {
  name: string;
  side: Side;
  scenario: CliScenario;
  server: ScriptedServer;
  parentDir: string;
  claudeBinary: string;
}): Promise<CliRun> {
  const { name, side, scenario } = options;
  const dirs = await makeRunDirs(`${name}-${side}`, {}, options.parentDir);
  const client = options.server.client(`${name}-${side}`, scriptOf(scenario), dirs.work);
  const placeholders: Record<string, string> = {
    work: dirs.work,
    home: dirs.home,
    root: dirs.root,
    apiKey: client.apiKey,
  };
  await mkdir(join(dirs.root, "hooks"));
  await writeFiles(dirs.work, scenario.files ?? {}, placeholders);
  if (scenario.git === true) commitAll(dirs.work);
  await writeFiles(dirs.home, scenario.home ?? {}, placeholders);
  const before = await snapshot(dirs.work);
  const env: Record<string, string> = isolatedEnv(dirs, { url: options.server.url, apiKey: client.apiKey });
  for (const [key, value] of Object.entries(scenario.env ?? {})) {
    if (value === null) delete env[key];
    else env[key] = fill(value, placeholders);
  }
  const timeoutMs = scenario.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const steps: StepResult[] = [];
  for (const step of [
    ...(scenario.before ?? []),
    { args: scenario.args, stdin: scenario.stdin } as CliStep,
  ]) {
    const session = steps.length > 0 ? sessionIdOf(steps[steps.length - 1]?.stdout ?? "") : undefined;
    if (session !== undefined) placeholders.session = session;
    const args = step.args.map((arg) => fill(arg, placeholders));
    const fullArgs = side === "forkloop" ? [...args, ...(scenario.forkloopArgs ?? [])] : args;
    const stdin = step.stdin === undefined ? undefined : fill(step.stdin, placeholders);
    const run = { args: fullArgs, cwd: dirs.work, env, timeoutMs, ...(stdin === undefined ? {} : { stdin }) };
    steps.push(
      side === "claude"
        ? await runClaude(options.claudeBinary, run)
        : scenario.spawn
          ? await runForkloopSpawned(run)
          : await runForkloopInProcess(run),
    );
  }
  const last = steps.pop() as StepResult;
  const gitState = scenario.git === true ? gitStateOf(dirs.work) : "";
  const madeUp = [...gitState.matchAll(/^worktree .*\/\.claude\/worktrees\/([^/\n]+)$/gm)]
    .map((match) => match[1] as string)
    .filter((name) => !steps.concat(last).some((step) => step.args.some((arg) => arg.includes(name))));
  const changedFiles = changed(before, await snapshot(dirs.work));
  return {
    side,
    dirs,
    ...last,
    before: steps,
    requests: client.requests(),
    scriptFailures: client.scriptFailures(),
    hookInputs: await readHookInputs(join(dirs.root, "hooks")),
    changedFiles: Object.fromEntries(
      Object.entries(changedFiles).map(([path, content]) => [withoutNames(path, madeUp), content]),
    ),
    gitState: withoutNames(gitState, madeUp),
    madeUpWorktreeNames: madeUp,
  };
}

/** A made-up worktree name as `<made-up name>` (each side makes up its own). */
function withoutNames(text: string, names: readonly string[]): string {
  return names.reduce((out, name) => out.split(name).join("<made-up name>"), text);
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "Conformance",
  GIT_AUTHOR_EMAIL: "conformance@example.com",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_NAME: "Conformance",
  GIT_COMMITTER_EMAIL: "conformance@example.com",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
};

/** `git init` with every file committed, at a fixed identity and time: the same commit on both sides. */
function commitAll(dir: string): void {
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: dir, env: { ...process.env, ...GIT_IDENTITY }, stdio: "pipe" });
  git("init", "--quiet", "--initial-branch=main");
  git("add", "-A");
  git("commit", "--quiet", "--allow-empty", "-m", "initial");
}

/** The worktrees (each lock's reason names the program and its pid: left out) and branches. */
function gitStateOf(dir: string): string {
  const git = (...args: string[]) =>
    execFileSync("git", args, { cwd: dir, env: { ...process.env, ...GIT_IDENTITY }, encoding: "utf8" });
  const worktrees = git("worktree", "list", "--porcelain").replace(/^locked .*$/gm, "locked");
  return `${worktrees}\nbranches: ${git("branch", "--list", "--format=%(refname:short)").trim().split("\n").join(" ")}\n`;
}

interface StepRun {
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
  timeoutMs: number;
}

async function runClaude(binary: string, run: StepRun): Promise<StepResult> {
  // Its own process group, so nothing Claude Code starts outlives a timeout.
  const child = spawn(binary, run.args, { cwd: run.cwd, env: run.env, detached: true });
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group has already ended
    }
  };
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdin.end(run.stdin ?? "");
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, run.timeoutMs);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  clearTimeout(timer);
  // A hook Claude Code starts without waiting for it (StopFailure's, as it exits) still runs to
  // its end in a user's shell: let the group finish before the kill, or its record is lost.
  if (!timedOut) await groupEnded(child.pid, HOOK_GRACE_MS);
  killGroup();
  return { args: run.args, exitCode, stdout, stderr, timedOut };
}

const HOOK_GRACE_MS = 3_000;

/** Resolves once no process of the group is left, or after `limitMs`. */
async function groupEnded(pid: number | undefined, limitMs: number): Promise<void> {
  if (pid === undefined) return;
  const deadline = performance.now() + limitMs;
  while (performance.now() < deadline) {
    try {
      process.kill(-pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function runForkloopInProcess(run: StepRun): Promise<StepResult> {
  const started = startCliInProcess(run.args, {
    cwd: run.cwd,
    env: run.env,
    ...(run.stdin === undefined ? {} : { stdin: run.stdin }),
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    void started.stop();
  }, run.timeoutMs);
  const result = await started.exited;
  clearTimeout(timer);
  return { args: run.args, exitCode: result.code, stdout: result.stdout, stderr: result.stderr, timedOut };
}

async function runForkloopSpawned(run: StepRun): Promise<StepResult> {
  const result = await runCli(run.args, {
    cwd: run.cwd,
    env: run.env,
    ...(run.stdin === undefined ? {} : { stdin: run.stdin }),
  });
  return {
    args: run.args,
    exitCode: result.code,
    stdout: result.stdout,
    stderr: result.stderr,
    timedOut: false,
  };
}

function fill(text: string, placeholders: Readonly<Record<string, string>>): string {
  return text.replace(
    /\{(work|home|root|session|apiKey)\}/g,
    (whole, name: string) => placeholders[name] ?? whole,
  );
}

async function writeFiles(
  dir: string,
  files: Readonly<Record<string, string>>,
  placeholders: Readonly<Record<string, string>>,
): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const file = join(dir, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, fill(content, placeholders));
  }
}

/** The session id a step printed (json or stream-json output). */
function sessionIdOf(stdout: string): string | undefined {
  return /"session_id":"([0-9a-f-]{36})"/.exec(stdout)?.[1];
}

async function snapshot(root: string): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const name = relative(root, path);
    if (name.startsWith(`.git${sep}`)) continue;
    files.set(name, await readFile(path, "utf8"));
  }
  return files;
}

function changed(before: Map<string, string>, after: Map<string, string>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [path, content] of after) if (before.get(path) !== content) out[path] = content;
  for (const path of before.keys()) if (!after.has(path)) out[path] = null;
  return out;
}

async function readHookInputs(dir: string): Promise<Record<string, unknown>[]> {
  const names = (await readdir(dir)).sort();
  const inputs: Record<string, unknown>[] = [];
  for (const name of names) {
    const text = await readFile(join(dir, name), "utf8");
    try {
      inputs.push(JSON.parse(text) as Record<string, unknown>);
    } catch {
      inputs.push({ hook_event_name: "(not JSON)", text: text.slice(0, 200) });
    }
  }
  return inputs;
}
