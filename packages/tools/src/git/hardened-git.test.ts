import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { useTempWorkspace } from "../testing/index.js";
import { findGitRepository, headName, readGitHead } from "./git-repository.js";
import { hardenedGitEnvironment, withHardenedGit } from "./hardened-git.js";

const workspace = useTempWorkspace("forkloop-hardened-git-");
let savedPath: string | undefined;

beforeEach(() => {
  savedPath = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = savedPath;
});

function repository(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync("git", args, {
      cwd: dir,
      stdio: "ignore",
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    });
  git("init", "-q", "-b", "trunk");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git("add", "a.txt");
  git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-q", "-m", "first");
}

/** A `git` first on PATH that records its arguments and environment, then runs `then`. */
function gitShim(then: string): string {
  const bin = join(workspace.root, "bin");
  const log = join(workspace.root, "git-calls");
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, "git"), `#!/bin/sh\n{ echo "ARGS $*"; env; echo; } >> '${log}'\n${then}\n`);
  chmodSync(join(bin, "git"), 0o755);
  process.env.PATH = `${bin}:${savedPath ?? ""}`;
  return log;
}

describe("forkloop's own git (R-S7)", () => {
  it("R-S7: the environment has no model credentials, no GIT_* of forkloop's own, no system or global config", () => {
    const env = hardenedGitEnvironment({
      PATH: "/usr/bin",
      ANTHROPIC_API_KEY: "sk-secret",
      ANTHROPIC_AUTH_TOKEN: "token",
      FORKLOOP_API_KEY: "secret",
      GIT_DIR: "/elsewhere",
      GIT_CONFIG_PARAMETERS: "'core.fsmonitor'='/tmp/evil'",
      GIT_SSH_COMMAND: "evil",
      GIT_EXEC_PATH: "/tmp/evil-bin",
      PAGER: "evil",
      EDITOR: "evil",
    });
    expect(env).toEqual({
      PATH: "/usr/bin",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_ATTR_NOSYSTEM: "1",
      GIT_OPTIONAL_LOCKS: "0",
      GIT_TERMINAL_PROMPT: "0",
      GIT_NO_REPLACE_OBJECTS: "1",
    });
  });

  it("R-S7: each git process gets that environment, forkloop's own git directory and no optional locks", async () => {
    const repo = join(workspace.root, "repo");
    repository(repo);
    const log = gitShim('exec /usr/bin/git "$@"');
    const found = findGitRepository(repo);
    if (found === undefined) throw new Error("no repository found");
    const saved = process.env.ANTHROPIC_API_KEY;
    process.env.ANTHROPIC_API_KEY = "sk-must-not-reach-git";
    let status: string | null | undefined;
    try {
      status = await withHardenedGit(found, (git) => git(["status", "--short"], repo));
    } finally {
      if (saved === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved;
    }
    expect(status).toBe("");
    const calls = readFileSync(log, "utf8")
      .split("\n\n")
      .filter((call) => call.trim() !== "");
    const statusCall = calls.find((call) => call.includes("ARGS --no-pager --no-optional-locks status"));
    expect(statusCall).toBeDefined();
    for (const call of calls) {
      expect(call).not.toContain("sk-must-not-reach-git");
      expect(call).toContain("GIT_CONFIG_NOSYSTEM=1");
      expect(call).toContain("GIT_CONFIG_GLOBAL=/dev/null");
      expect(call).toMatch(new RegExp(`^GIT_DIR=${tmpdir()}/forkloop-git-`, "m"));
    }
    expect(statusCall).toContain(`GIT_WORK_TREE=${repo}`);
    expect(statusCall).toContain("GIT_CONFIG_KEY_0=core.filemode");
  });

  it("R-S7: a git that hangs is killed at the timeout, and forkloop's git directory is removed", async () => {
    const repo = join(workspace.root, "repo");
    repository(repo);
    const log = gitShim("exec sleep 60");
    const found = findGitRepository(repo);
    if (found === undefined) throw new Error("no repository found");
    const status = await withHardenedGit(found, (git) => git(["status"], repo), { timeoutMs: 300 });
    expect(status).toBeNull();
    const used = [...readFileSync(log, "utf8").matchAll(/^GIT_DIR=(.*forkloop-git-[^/\n]*)/gm)].map(
      (m) => m[1],
    );
    expect(used.length).toBeGreaterThan(0);
    for (const dir of used) expect(existsSync(dir as string)).toBe(false);
  });

  it("R-S7: what shapes the output is kept — the repository's display keys (core.filemode …) and a SHA-256 object format", async () => {
    const repo = join(workspace.root, "repo");
    mkdirSync(repo);
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
        cwd: repo,
        env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
      }).toString();
    git("init", "-q", "--object-format=sha256", "-b", "main");
    writeFileSync(join(repo, "run.sh"), "echo\n");
    git("add", "run.sh");
    git("commit", "-q", "-m", "first");
    chmodSync(join(repo, "run.sh"), 0o755);
    git("config", "core.filemode", "false");
    git("config", "status.showUntrackedFiles", "no");
    writeFileSync(join(repo, "untracked.txt"), "x\n");
    const found = findGitRepository(repo);
    if (found === undefined) throw new Error("no repository found");
    const [status, log] =
      (await withHardenedGit(found, (run) =>
        Promise.all([run(["status", "--short"], repo), run(["log", "--oneline", "-n", "1"], repo)]),
      )) ?? [];
    // Plain git agrees: no mode change, no untracked file.
    expect(git("status", "--short")).toBe("");
    expect(status).toBe("");
    expect(log).toMatch(/^[0-9a-f]{7,} first\n$/);
  });

  it("R-S7: a FIFO planted as the index gives no status at once, instead of a git that hangs", async () => {
    const repo = join(workspace.root, "repo");
    repository(repo);
    rmSync(join(repo, ".git", "index"));
    execFileSync("mkfifo", [join(repo, ".git", "index")]);
    const found = findGitRepository(repo);
    if (found === undefined) throw new Error("no repository found");
    const log = gitShim('exec /usr/bin/git "$@"');
    expect(await withHardenedGit(found, (git) => git(["status"], repo))).toBeUndefined();
    expect(readFileSync(log, "utf8")).not.toContain("ARGS --no-pager --no-optional-locks status");
  });

  it("R-S7: the repository and its branch are found by reading files, gitfiles and worktrees included", () => {
    const repo = join(workspace.root, "repo");
    repository(repo);
    mkdirSync(join(repo, "deep", "er"), { recursive: true });
    gitShim("exit 99"); // no git may run for this
    const found = findGitRepository(join(repo, "deep", "er"));
    expect(found).toEqual({ workTree: repo, gitDir: join(repo, ".git"), commonDir: join(repo, ".git") });
    if (found === undefined) throw new Error("unreachable");
    const head = readGitHead(found);
    expect(head).toEqual({ type: "branch", ref: "refs/heads/trunk" });
    if (head !== undefined) expect(headName(head)).toBe("trunk");
    expect(existsSync(join(workspace.root, "git-calls"))).toBe(false);

    // A gitfile pointing at a git directory elsewhere (as `git worktree add` and submodules write).
    const linked = join(workspace.root, "linked");
    mkdirSync(linked);
    mkdirSync(join(repo, ".git", "worktrees", "linked"), { recursive: true });
    writeFileSync(join(repo, ".git", "worktrees", "linked", "HEAD"), `${"a".repeat(40)}\n`);
    writeFileSync(join(repo, ".git", "worktrees", "linked", "commondir"), "../..\n");
    writeFileSync(join(linked, ".git"), `gitdir: ${join(repo, ".git", "worktrees", "linked")}\n`);
    const worktree = findGitRepository(linked);
    expect(worktree).toEqual({
      workTree: linked,
      gitDir: join(repo, ".git", "worktrees", "linked"),
      commonDir: join(repo, ".git"),
    });
    if (worktree !== undefined)
      expect(readGitHead(worktree)).toEqual({ type: "detached", oid: "a".repeat(40) });

    expect(findGitRepository(workspace.root)).toBeUndefined();
  });

  it("R-S7: objects/info/alternates naming a repository outside the work tree is not followed (its commit subject is not printed); one inside is; plain git follows both (control)", async () => {
    const repo = join(workspace.root, "repo");
    const inside = join(repo, "vendor", "store");
    const outside = join(workspace.root, "elsewhere");
    repository(repo);
    const plain = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
        cwd,
        env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
      })
        .toString()
        .trim();
    const storeWith = (dir: string, subject: string) => {
      repository(dir);
      plain(dir, "commit", "-q", "--allow-empty", "-m", subject);
      return plain(dir, "rev-parse", "HEAD");
    };
    const logAt = async (oid: string) => {
      plain(repo, "update-ref", "HEAD", oid);
      const found = findGitRepository(repo);
      if (found === undefined) throw new Error("no repository found");
      return withHardenedGit(found, (git) => git(["log", "--format=%s", "-n", "1"], repo));
    };
    const far = storeWith(outside, "OUTSIDE_SUBJECT");
    const near = storeWith(inside, "INSIDE_SUBJECT");
    writeFileSync(
      join(repo, ".git", "objects", "info", "alternates"),
      `${join(outside, ".git", "objects")}\n../../vendor/store/.git/objects\n`,
    );
    expect(plain(repo, "log", "--format=%s", "-n", "1", far)).toBe("OUTSIDE_SUBJECT");
    expect(await logAt(far)).toBeNull();
    expect(await logAt(near)).toBe("INSIDE_SUBJECT\n");
  });
});
