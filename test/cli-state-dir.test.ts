import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { projectKey } from "@forkloop/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * State lives outside the checkout, under the user's forkloop directory, keyed
 * by project (the git root); FORKLOOP_HOME and --state-dir move it; state left in
 * `<cwd>/.forkloop` is still found. Through the command line in-process.
 */
const git = promisify(execFile);
let root: string;
let project: string;
let home: string;

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => !relative(dir, join(entry.parentPath, entry.name)).startsWith(".git"))
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-state-"));
  project = join(root, "checkout");
  home = join(root, "home");
  await mkdir(join(project, "sub"), { recursive: true });
  await mkdir(home);
  await writeFile(join(project, "a.txt"), "alpha beta gamma\n");
  await writeFile(join(project, "sub", "b.txt"), "delta\n");
  await git("git", ["init", "-q"], { cwd: project });
  await git("git", ["add", "."], { cwd: project });
  await git("git", ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"], { cwd: project });
});
afterAll(async () => {
  await chmod(project, 0o755).catch(() => {});
  await rm(root, { recursive: true, force: true });
});

const cli = (args: string[], cwd = project, env: Record<string, string> = {}) =>
  runCliInProcess(args, { cwd, env: { HOME: home, ...env } });
const sessionIdOf = (stdout: string) => String((JSON.parse(stdout) as { session_id: string }).session_id);

describe("state outside the checkout", () => {
  /** Runs `args` in the checkout made read-only; asserts nothing in it changed and git status is clean. */
  async function inReadOnlyCheckout(args: string[]) {
    const before = await filesUnder(project);
    // Read-only for every user but root (root is let through, so the unchanged tree is the proof).
    await chmod(project, 0o555);
    const result = await cli(args).finally(() => chmod(project, 0o755));
    expect(result.code, result.stderr).toBe(0);
    expect(await filesUnder(project)).toEqual(before);
    expect((await git("git", ["status", "--porcelain"], { cwd: project })).stdout).toBe("");
    return result;
  }
  const stateOfProject = () => join(home, ".forkloop", "projects", projectKey(project));

  it("a read-only checkout: run writes nothing into it (git status stays clean); the session is under ~/.forkloop/projects/<project>", async () => {
    const run = await inReadOnlyCheckout(["run", "Summarize a.txt", "--output-format", "json"]);
    expect(await readdir(join(stateOfProject(), "sessions"))).toContain(`${sessionIdOf(run.stdout)}.fltr`);
  });

  it("a read-only checkout: batch writes nothing into it; its state is under ~/.forkloop/projects/<project>", async () => {
    await inReadOnlyCheckout(["batch", "--files", "*.txt", "--prompt", "Summarize {{file}}", "--id", "ro"]);
    expect(await readdir(join(stateOfProject(), "batches"))).toEqual(["ro"]);
  });

  it("keyed by project: a session started in a subdirectory is listed from the git root", async () => {
    const run = await cli(["run", "Summarize b.txt", "--output-format", "json"], join(project, "sub"));
    expect(run.code, run.stderr).toBe(0);
    const list = await cli(["sessions", "list"]);
    expect(list.stdout).toContain(sessionIdOf(run.stdout));
  });

  it("FORKLOOP_HOME and --state-dir move the state", async () => {
    const elsewhere = join(root, "elsewhere");
    const moved = await cli(["run", "hi", "--output-format", "json"], project, { FORKLOOP_HOME: elsewhere });
    expect(await readdir(join(elsewhere, "projects", projectKey(project), "sessions"))).toContain(
      `${sessionIdOf(moved.stdout)}.fltr`,
    );
    const explicit = join(root, "explicit");
    const pinned = await cli(["run", "hi", "--output-format", "json", "--state-dir", explicit]);
    expect(await readdir(join(explicit, "sessions"))).toContain(`${sessionIdOf(pinned.stdout)}.fltr`);
  });

  it("a session left in <cwd>/.forkloop (before state moved) is still listed and resumed in place", async () => {
    const legacy = join(project, ".forkloop");
    const old = await cli(["run", "Summarize a.txt", "--output-format", "json", "--state-dir", legacy]);
    const id = sessionIdOf(old.stdout);
    expect((await cli(["sessions", "list"])).stdout).toContain(id);
    const resumed = await cli(["run", "--resume", id, "and again", "--output-format", "json"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(sessionIdOf(resumed.stdout)).toBe(id);
    // Resumed where it lives: no copy appears under the new location.
    expect(await readdir(join(legacy, "sessions"))).toEqual([`${id}.fltr`]);
    expect(await readdir(join(stateOfProject(), "sessions")).catch(() => [])).not.toContain(`${id}.fltr`);
  });

  it("a batch left in <cwd>/.forkloop is still found", async () => {
    const legacy = join(project, ".forkloop");
    await cli([
      "batch",
      "--files",
      "a.txt",
      "--prompt",
      "Summarize {{file}}",
      "--id",
      "old",
      "--state-dir",
      legacy,
    ]);
    expect((await cli(["batch", "status", "old"])).stdout).toContain(
      `state:  ${join(legacy, "batches", "old")}`,
    );
  });

  it("an unwritable state directory is exit 2 before the first request, for run and batch", async () => {
    const sim = await startSimInProcess(root);
    try {
      await writeFile(join(root, "a-file"), "");
      const env = { ...sim.env, FORKLOOP_HOME: join(root, "a-file", "forkloop") };
      const run = await cli(["run", "hi"], project, env);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /cannot write the session transcript to .*a-file\/forkloop\/projects\/.*\(a path component is a file\); set FORKLOOP_HOME/,
      );
      const batch = await cli(["batch", "--files", "*.txt", "--prompt", "Summarize {{file}}"], project, env);
      expect(batch.code).toBe(2);
      expect(batch.stderr).toMatch(
        /cannot write the batch state directory .*a-file\/forkloop\/projects\/.*set FORKLOOP_HOME or --state-dir/,
      );
      expect((await sim.requests()).filter((record) => record.path.startsWith("/v1/messages"))).toEqual([]);
    } finally {
      await sim.stop();
    }
  });
});
