/**
 * A sandboxed Bash call with R-S9's binds against the bind set before them, side by side in one
 * run, on a real git repository with project settings (`npm run bench -- sandbox`).
 *
 * "Before" is the previous argument list, kept here only: `--ro-bind / / --dev /dev --proc /proc
 * --tmpfs /tmp --bind ROOT ROOT --unshare-all --die-with-parent --chdir CWD --`, passed through the
 * Bash tool's `sandboxArgs` seam, so both sides go through the same tool and the same per-call
 * plan (git's execution points, the host socket list, the guards); what differs is what bwrap
 * mounts (read-only points, a pinned `.git`, a fresh /run, /dev/null over sockets) and the shell
 * that sets RLIMIT_NPROC. The plan's own cost is reported beside: the time from the call to the
 * moment the plan is handed to `sandboxArgs`.
 */
import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createBashTool, probeBubblewrap, type SandboxPlan, sandboxArgs } from "@forkloop/tools";
import { callTool, createToolTestContext } from "@forkloop/tools/testing";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

const ITERATIONS = 40;
const COMMAND = { command: "echo hi > out.txt && git status --short >/dev/null && cat out.txt" };

/** The bind set before R-S9. */
function previousBindSet(plan: SandboxPlan): string[] {
  const args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"];
  for (const root of plan.roots) args.push("--bind", root, root);
  args.push("--unshare-all");
  if (plan.network) args.push("--share-net");
  args.push("--die-with-parent", "--chdir", plan.cwd, "--");
  return args;
}

function workspace(root: string): string {
  const dir = join(root, "repo");
  mkdirSync(join(dir, "src"), { recursive: true });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", ...args], {
      cwd: dir,
      stdio: "ignore",
    });
  git("init", "-q", "-b", "main");
  for (let index = 0; index < 200; index++)
    writeFileSync(join(dir, "src", `f${index}.ts`), `export const v = ${index};\n`);
  mkdirSync(join(dir, ".forkloop"));
  writeFileSync(join(dir, ".forkloop", "settings.json"), "{}");
  mkdirSync(join(dir, ".claude"));
  writeFileSync(join(dir, ".mcp.json"), '{"mcpServers":{}}');
  git("config", "core.hooksPath", ".githooks");
  git("add", ".");
  git("commit", "-q", "-m", "initial");
  return dir;
}

/**
 * A pnpm-like `node_modules` in the workspace: PACKAGES packages of FILES files, each a hard link
 * to a store outside the workspace (under /var/tmp: one file system with the workspace there, and
 * not hidden by the sandbox's fresh /tmp), plus pnpm's own lock file.
 */
const PACKAGES = 500;
const FILES = 10;
function pnpmWorkspace(root: string): { dir: string; store: string } {
  const dir = join(root, "ws");
  const store = join(root, "store");
  mkdirSync(join(dir, "src"), { recursive: true });
  for (let index = 0; index < 200; index++)
    writeFileSync(join(dir, "src", `f${index}.ts`), `export const v = ${index};\n`);
  for (let pkg = 0; pkg < PACKAGES; pkg++) {
    const inStore = join(store, `p${pkg}`);
    const inWorkspace = join(dir, "node_modules", ".pnpm", `p${pkg}@1.0.0`, "node_modules", `p${pkg}`);
    mkdirSync(inStore, { recursive: true });
    mkdirSync(inWorkspace, { recursive: true });
    for (let file = 0; file < FILES; file++) {
      writeFileSync(join(inStore, `f${file}.js`), `module.exports = ${file};\n`);
      linkSync(join(inStore, `f${file}.js`), join(inWorkspace, `f${file}.js`));
    }
  }
  writeFileSync(join(dir, "node_modules", ".pnpm", "lock.yaml"), "lockfileVersion: 9\n");
  return { dir, store };
}

/** The outside-links protection (outside-links.ts) against the same call without its binds. */
async function outsideLinksBench(bwrap: string): Promise<BenchResult> {
  const root = realpathSync(mkdtempSync(join("/var/tmp", "forkloop-bench-links-")));
  try {
    const { dir } = pnpmWorkspace(root);
    const context = createToolTestContext({ cwd: dir });
    const modules = join(dir, "node_modules");
    let callStarted = 0;
    const planMs: number[] = [];
    const withoutLinkBinds = (plan: SandboxPlan) =>
      sandboxArgs({ ...plan, readOnly: (plan.readOnly ?? []).filter((path) => path !== modules) });
    const timed = (plan: SandboxPlan) => {
      planMs.push(performance.now() - callStarted);
      if (!(plan.readOnly ?? []).includes(modules)) throw new Error("bench: node_modules was not held");
      return sandboxArgs(plan);
    };
    const before = createBashTool({ sandbox: { enabled: true, bwrap }, sandboxArgs: withoutLinkBinds });
    const after = createBashTool({ sandbox: { enabled: true, bwrap }, sandboxArgs: timed });
    const command = { command: "echo hi > out.txt && cat out.txt" };
    const beforeMs: number[] = [];
    const afterMs: number[] = [];
    await timeRuns(async () => {
      let start = performance.now();
      await callTool(before, command, context);
      beforeMs.push(performance.now() - start);
      start = performance.now();
      callStarted = start;
      await callTool(after, command, context);
      afterMs.push(performance.now() - start);
    }, ITERATIONS);
    const last = (samples: number[]) => samples.slice(-ITERATIONS);
    return compare(
      "sandbox: a Bash call in a workspace with a pnpm-like node_modules, hard links to a store outside held read-only vs not (lower is better)",
      "median wall time",
      "ms",
      { label: "without the outside-link bind (the walk still runs)", value: percentile(last(beforeMs), 50) },
      { label: "R-S9: node_modules bound read-only", value: percentile(last(afterMs), 50) },
      `${PACKAGES} packages × ${FILES} linked files + 200 source files; the per-call plan (walk of the workspace, cached by directory times after the first call) p50 ${percentile(planMs.slice(-ITERATIONS), 50).toFixed(2)} ms, first call ${(planMs[0] ?? 0).toFixed(1)} ms; the walk runs on both sides, so the ratio is the bind's cost and the plan time the walk's`,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult[]> {
  const probe = probeBubblewrap();
  if (!probe.ok) {
    return [
      {
        name: "sandbox: Bash call with R-S9's binds",
        metric: "skipped",
        value: 0,
        unit: "",
        notes: probe.reason,
      },
    ];
  }
  const root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-bench-sandbox-")));
  try {
    const dir = workspace(root);
    const context = createToolTestContext({ cwd: dir });
    const home = join(root, "home");
    let callStarted = 0;
    const planMs: number[] = [];
    const timedArgs = (plan: SandboxPlan) => {
      planMs.push(performance.now() - callStarted);
      return sandboxArgs(plan);
    };
    const before = createBashTool({
      sandbox: { enabled: true, bwrap: probe.bwrap },
      home,
      sandboxArgs: previousBindSet,
    });
    const after = createBashTool({
      sandbox: { enabled: true, bwrap: probe.bwrap },
      home,
      sandboxArgs: timedArgs,
    });
    const unfiltered = createBashTool({
      sandbox: { enabled: true, bwrap: probe.bwrap },
      home,
      sandboxArgs: ({ seccompFd: _, ...plan }: SandboxPlan) => sandboxArgs(plan),
    });
    // Alternate them so a load change on the shared machine falls on all alike.
    const beforeMs: number[] = [];
    const afterMs: number[] = [];
    const unfilteredMs: number[] = [];
    await timeRuns(async () => {
      let start = performance.now();
      await callTool(before, COMMAND, context);
      beforeMs.push(performance.now() - start);
      start = performance.now();
      callStarted = start;
      await callTool(after, COMMAND, context);
      afterMs.push(performance.now() - start);
      start = performance.now();
      await callTool(unfiltered, COMMAND, context);
      unfilteredMs.push(performance.now() - start);
    }, ITERATIONS);
    const first = (samples: number[]) => samples.slice(-ITERATIONS);
    return [
      compare(
        "sandbox: a Bash call with R-S9's binds vs the bind set before (lower is better)",
        "median wall time",
        "ms",
        { label: "before: / read-only, roots writable, fresh /tmp", value: percentile(first(beforeMs), 50) },
        {
          label: "R-S9: + read-only execution points, pinned .git, fresh /run, socket cover, RLIMIT_NPROC",
          value: percentile(first(afterMs), 50),
        },
        `git repository with settings and core.hooksPath (unix-socket filter on both sides since it is always on); p90 ${percentile(first(beforeMs), 90).toFixed(1)} → ${percentile(first(afterMs), 90).toFixed(1)} ms; per-call plan (git points, socket list, guards) p50 ${percentile(planMs.slice(-ITERATIONS), 50).toFixed(2)} ms`,
      ),
      compare(
        "sandbox: a Bash call with the unix-socket filter (always on) vs without it (lower is better)",
        "median wall time",
        "ms",
        { label: "every R-S9 bind, no seccomp program", value: percentile(first(unfilteredMs), 50) },
        { label: "R-S9: + socket(AF_UNIX) refused by seccomp", value: percentile(first(afterMs), 50) },
        "same repository and command, the three variants alternated",
      ),
      await outsideLinksBench(probe.bwrap),
    ];
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
