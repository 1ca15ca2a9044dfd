/**
 * Session start with forkloop's hardened git (R-S7) against the git calls it made before, and the
 * memory files read as Read reads a file (R-S8) against a plain `readFile`, on a real repository
 * of 2,000 tracked files (40 changed, 20 untracked, 30 commits). `npm run bench -- session-start`.
 *
 * "Before" is the previous code path, kept here only: `git rev-parse --show-toplevel`, then
 * `rev-parse --abbrev-ref HEAD`, `status --short` and `log --oneline -n 5` in parallel, each a plain
 * `execFile("git")` that reads the repository's config.
 */
import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { assembleSession, readGitSnapshot } from "@forkloop/orchestrator";
import { INSTRUCTION_FILE_MAX_BYTES, readProjectFile } from "@forkloop/tools";
import { type BenchResult, compare, percentile, timeRuns } from "./harness.js";

const ITERATIONS = 30;

function plainGit(cwd: string, args: readonly string[]): Promise<string | null> {
  return new Promise((resolve) => {
    execFile("git", [...args], { cwd, timeout: 5_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout) =>
      resolve(error ? null : stdout),
    );
  });
}

/** The prefetch as it was: the root first, then branch, status and log together. */
async function previousGitSnapshot(cwd: string): Promise<unknown> {
  const root = await plainGit(cwd, ["rev-parse", "--show-toplevel"]);
  if (root === null) return { repoRoot: null, status: null };
  const [branch, status, log] = await Promise.all([
    plainGit(cwd, ["rev-parse", "--abbrev-ref", "HEAD"]),
    plainGit(cwd, ["status", "--short"]),
    plainGit(cwd, ["log", "--oneline", "-n", "5"]),
  ]);
  return { repoRoot: root.trim(), branch, status, log };
}

function repository(root: string): string {
  const dir = join(root, "repo");
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=b", "-c", "user.email=b@example.com", ...args], {
      cwd: dir,
      stdio: "ignore",
    });
  mkdirSync(dir);
  git("init", "-q", "-b", "main");
  for (let index = 0; index < 2_000; index++) {
    const sub = join(dir, "src", `m${index % 40}`);
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${index}.ts`), `export const v${index} = ${index};\n`);
  }
  git("add", ".");
  git("commit", "-q", "-m", "initial");
  for (let index = 0; index < 29; index++) git("commit", "-q", "--allow-empty", "-m", `change ${index}`);
  for (let index = 0; index < 40; index++) {
    writeFileSync(join(dir, "src", `m${index}`, `f${index}.ts`), `export const v${index} = -1;\n`);
  }
  for (let index = 0; index < 20; index++) writeFileSync(join(dir, `new-${index}.md`), "new\n");
  for (const name of ["CLAUDE.md", "AGENTS.md"])
    writeFileSync(join(dir, name), `# ${name}\n${"Rule.\n".repeat(200)}`);
  for (let index = 0; index < 8; index++) {
    writeFileSync(join(dir, "src", `m${index}`, "CLAUDE.md"), `# module ${index}\n${"Note.\n".repeat(100)}`);
  }
  return dir;
}

export async function run(): Promise<BenchResult[]> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-bench-session-start-")));
  try {
    const repo = repository(root);
    const cwd = join(repo, "src", "m3");
    const results: BenchResult[] = [];

    const before = await timeRuns(() => previousGitSnapshot(cwd), ITERATIONS);
    const hardened = await timeRuns(() => readGitSnapshot(cwd), ITERATIONS);
    results.push(
      compare(
        "session start: git prefetch, hardened (R-S7) vs before",
        "p50 wall time",
        "ms",
        { label: "plain git (4 processes, repository config)", value: percentile(before, 50) },
        { label: "hardened git (3 processes, own git dir)", value: percentile(hardened, 50) },
        `2,000 tracked files, 40 changed, 20 untracked; p90 ${percentile(before, 90).toFixed(1)} → ${percentile(hardened, 90).toFixed(1)} ms`,
      ),
    );

    const memoryPaths = [
      join(repo, "CLAUDE.md"),
      join(repo, "AGENTS.md"),
      join(repo, "src", "CLAUDE.md"),
      join(repo, "src", "m3", "CLAUDE.md"),
      join(repo, "MEMORY.md"),
      join(repo, "src", "m3", "AGENTS.md"),
    ];
    const plainReads = await timeRuns(
      () => Promise.all(memoryPaths.map((path) => readFile(path, "utf8").catch(() => null))),
      ITERATIONS * 10,
    );
    const checkedReads = await timeRuns(
      () =>
        memoryPaths.map((path) =>
          readProjectFile(path, { roots: [repo], maxBytes: INSTRUCTION_FILE_MAX_BYTES, what: "memory file" }),
        ),
      ITERATIONS * 10,
    );
    results.push(
      compare(
        "session start: memory files read as Read reads them (R-S8) vs readFile",
        "p50 wall time for 6 candidates (3 present)",
        "ms",
        { label: "readFile", value: percentile(plainReads, 50) },
        { label: "readProjectFile (fstat, link count, real path)", value: percentile(checkedReads, 50) },
      ),
    );

    const sessions = await timeRuns(
      () =>
        assembleSession({
          cwd,
          model: "claude-sonnet-4-6",
          permissionMode: "default",
          tools: [],
          home: root,
        }),
      ITERATIONS,
    );
    results.push({
      name: "session start: assembleSession (memory, skills, agents, hardened git)",
      metric: "p50 wall time",
      value: percentile(sessions, 50),
      unit: "ms",
      notes: "the whole prefetch after the change, for scale",
    });
    return results;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
