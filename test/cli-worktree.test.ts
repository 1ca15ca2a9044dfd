import { access, mkdir, mkdtemp, readdir, readFile, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess as runCli } from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { toolThenTextBrain } from "@forkloop/sim/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { git, gitProject } from "./support/git-project.js";

/**
 * R-X1: `forkloop run --worktree [name]` / `-w`, as Claude Code 2.1.332's `-p --worktree` (measured
 * by test/conformance/claude-cli/scenarios/worktree-*.ts): the session runs in a new git worktree
 * `.claude/worktrees/<name>` on branch `worktree-<name>`, made from the remote's default branch
 * (else HEAD), locked, and kept after the run. The model's one Bash command, `pwd > where.txt`,
 * shows where the session worked.
 */
let root: string;
let home: string;
let server: Simulator;
beforeAll(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), "forkloop-cli-worktree-")));
  home = join(root, "home");
  await mkdir(home);
  server = await startSimulator({
    brain: toolThenTextBrain({ name: "Bash", input: { command: "pwd > where.txt" } }, "done"),
  });
});
afterAll(async () => {
  await server.close();
  await rm(root, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url, HOME: home });
const run = (dir: string, ...args: string[]) =>
  runCli(
    ["-p", "Record where you work.", "--permission-mode", "bypassPermissions", "--sandbox", "off", ...args],
    {
      cwd: dir,
      env: env(),
    },
  );
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe("R-X1: forkloop run --worktree [name]", () => {
  it("R-X1: --worktree NAME runs the session in .claude/worktrees/NAME on branch worktree-NAME, locked and kept; the same name again reuses it", async () => {
    const dir = await gitProject(join(root, "named"), { "README.md": "# demo\n" });
    await mkdir(join(dir, "src"));
    const first = await run(join(dir, "src"), "--worktree", "feature-x");
    expect(first.code, first.stderr).toBe(0);
    const tree = join(dir, ".claude", "worktrees", "feature-x");
    // The worktree's top level, also when started in a subdirectory (as Claude Code does).
    expect((await readFile(join(tree, "where.txt"), "utf8")).trim()).toBe(tree);
    expect(await exists(join(dir, "where.txt"))).toBe(false);
    expect(await exists(join(dir, "src", "where.txt"))).toBe(false);
    expect(await readFile(join(tree, "README.md"), "utf8")).toBe("# demo\n");
    const listed = git(dir, "worktree", "list", "--porcelain");
    expect(listed).toContain(`worktree ${tree}\n`);
    expect(listed).toContain("branch refs/heads/worktree-feature-x\n");
    expect(listed).toMatch(/locked forkloop session feature-x \(pid \d+\)/);
    // Told where it is, as Claude Code tells a session in a linked worktree.
    const system = JSON.stringify(JSON.parse(server.requests().at(-1)?.rawBody ?? "{}").system);
    expect(system).toContain(`Working directory: ${tree}`);
    expect(system).toContain("This is a git worktree");
    const again = await run(dir, "-w", "feature-x");
    expect(again.code, again.stderr).toBe(0);
    expect(git(dir, "worktree", "list").trim().split("\n")).toHaveLength(2);
  });

  it("R-X1: -w without a name makes one up (adjective-verb-animal); a / in a name is + in the directory and branch", async () => {
    const dir = await gitProject(join(root, "unnamed"), { "README.md": "# demo\n" });
    const made = await run(dir, "-w");
    expect(made.code, made.stderr).toBe(0);
    const names = await readdir(join(dir, ".claude", "worktrees"));
    expect(names).toHaveLength(1);
    expect(names[0]).toMatch(/^[a-z]+-[a-z]+-[a-z]+$/);
    expect(await exists(join(dir, ".claude", "worktrees", names[0] as string, "where.txt"))).toBe(true);
    const nested = await run(dir, "--worktree=team/login");
    expect(nested.code, nested.stderr).toBe(0);
    expect(await exists(join(dir, ".claude", "worktrees", "team+login", "where.txt"))).toBe(true);
    expect(git(dir, "branch", "--list", "worktree-team+login")).toContain("worktree-team+login");
  });

  it("R-X1: the worktree starts from the remote's default branch, not a local commit ahead of it; without a reachable remote from what was fetched; settings' worktree.baseRef head: from local HEAD", async () => {
    const origin = join(root, "origin.git");
    git(root, "init", "-q", "--bare", origin);
    const seed = await gitProject(join(root, "seed"), { "a.txt": "remote\n" });
    git(seed, "push", "-q", origin, "HEAD:refs/heads/main");
    git(origin, "symbolic-ref", "HEAD", "refs/heads/main");
    const dir = join(root, "clone");
    git(root, "clone", "-q", origin, dir);
    await writeFile(join(dir, "a.txt"), "local\n");
    git(dir, "commit", "-qam", "local ahead");
    const fresh = await run(dir, "-w", "fresh");
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(await readFile(join(dir, ".claude", "worktrees", "fresh", "a.txt"), "utf8")).toBe("remote\n");
    // Settings' worktree.baseRef "head" (Claude Code's): local HEAD, the commit ahead.
    const head = await run(dir, "-w", "head", "--settings", '{"worktree":{"baseRef":"head"}}');
    expect(head.code, head.stderr).toBe(0);
    expect(await readFile(join(dir, ".claude", "worktrees", "head", "a.txt"), "utf8")).toBe("local\n");
    git(dir, "remote", "set-url", "origin", join(root, "gone.git"));
    const offline = await run(dir, "-w", "offline");
    expect(offline.code, offline.stderr).toBe(0);
    expect(await readFile(join(dir, ".claude", "worktrees", "offline", "a.txt"), "utf8")).toBe("remote\n");
  });

  it("R-X1: bad input is exit 2 before any request, naming the problem and the fix: outside git, a name git or Claude Code refuses", async () => {
    const plain = await gitProject(join(root, "plain"), { "README.md": "# demo\n" }, false);
    const repo = await gitProject(join(root, "bad-names"), { "README.md": "# demo\n" });
    const before = server.requests().length;
    const outside = await run(plain, "--worktree", "x");
    expect(outside.code).toBe(2);
    expect(outside.stderr).toContain(`${plain} is not in a git repository`);
    expect(outside.stderr).toContain("drop --worktree");
    // One line naming the problem and the fix, never a stack (R-R4).
    expect(outside.stderr).not.toContain("unexpected error");
    expect(outside.stderr.trim().split("\n")).toHaveLength(1);
    for (const [name, words] of [
      ["bad name", "only letters, digits, dots, underscores and dashes"],
      ["a/../b", 'must not have "." or ".." segments'],
      ["x".repeat(65), "64 characters or fewer (got 65)"],
      ["x..y", "git could not create the worktree"],
    ] as const) {
      const refused = await run(repo, `--worktree=${name}`);
      expect(refused.code, name).toBe(2);
      expect(refused.stderr, name).toContain(words);
    }
    expect(server.requests().length).toBe(before);
    expect(await exists(join(repo, ".claude", "worktrees", "x..y"))).toBe(false);
    const empty = join(root, "empty");
    await mkdir(empty);
    git(empty, "init", "-q");
    const noCommit = await run(empty, "-w", "x");
    expect(noCommit.code).toBe(2);
    expect(noCommit.stderr).toContain("has no commit yet; commit first");
  });
});
