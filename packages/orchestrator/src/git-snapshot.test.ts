import { execFileSync } from "node:child_process";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readGitSnapshot } from "./git-status.js";

// A real git behind a logging shim first on PATH: the test counts the git processes started.
let root: string;
let repo: string;
let plain: string;
let log: string;
let savedPath: string | undefined;

const gitCalls = () =>
  readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line !== "");

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-git-snapshot-")));
  repo = join(root, "repo");
  plain = join(root, "plain");
  log = join(root, "git-calls.log");
  mkdirSync(repo);
  mkdirSync(plain);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  git("init", "-q", "-b", "trunk");
  git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first");
  const bin = join(root, "bin");
  mkdirSync(bin);
  writeFileSync(join(bin, "git"), `#!/bin/sh\necho "$*" >> '${log}'\nexec /usr/bin/git "$@"\n`);
  chmodSync(join(bin, "git"), 0o755);
  savedPath = process.env.PATH;
  process.env.PATH = `${bin}:${savedPath ?? ""}`;
});

afterAll(() => {
  process.env.PATH = savedPath;
  rmSync(root, { recursive: true, force: true });
});

beforeEach(() => writeFileSync(log, ""));

describe("readGitSnapshot (§1.2 prefetch, R-K1 many sessions in one process)", () => {
  it("sessions starting together in one repository share one read: 3 git processes for 16", async () => {
    const snapshots = await Promise.all(Array.from({ length: 16 }, () => readGitSnapshot(repo)));
    expect(gitCalls()).toHaveLength(3);
    for (const snapshot of snapshots) {
      expect(snapshot.repoRoot).toBe(repo);
      expect(snapshot.status?.branch).toBe("trunk");
      expect(snapshot.status?.recentCommits).toEqual([expect.stringContaining("first")]);
    }
  });

  it("R-S7: outside a repository no git runs at all", async () => {
    const snapshots = await Promise.all(Array.from({ length: 16 }, () => readGitSnapshot(plain)));
    expect(gitCalls()).toEqual([]);
    expect(snapshots.every((snapshot) => snapshot.repoRoot === null && snapshot.status === null)).toBe(true);
  });

  it("a session starting after the read finished takes a new snapshot (never a stale one)", async () => {
    const before = await readGitSnapshot(repo);
    writeFileSync(join(repo, "new-file.txt"), "x");
    const after = await readGitSnapshot(repo);
    expect(before.status?.changes).toEqual([]);
    expect(after.status?.changes).toEqual(["?? new-file.txt"]);
    expect(gitCalls()).toHaveLength(6);
  });

  it("R-X1: a linked worktree is said (its git directory is not the repository's); the main checkout is not", async () => {
    const linked = join(root, "linked");
    execFileSync("git", ["worktree", "add", "-q", "-b", "side", linked], { cwd: repo, stdio: "ignore" });
    expect((await readGitSnapshot(linked)).linkedWorktree).toBe(true);
    expect((await readGitSnapshot(repo)).linkedWorktree).toBe(false);
    expect((await readGitSnapshot(plain)).linkedWorktree).toBe(false);
  });
});
