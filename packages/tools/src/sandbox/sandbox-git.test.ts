import { execFileSync } from "node:child_process";
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace, weakenedSandbox } from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";

/**
 * R-S9 for git on a real bwrap: what git runs later — config, hooks, info/attributes, the
 * `core.hooksPath` directory, included config, a gitfile and the git directory it names, a
 * submodule's own — is read-only inside the sandbox, while ordinary git work (add, commit, branch,
 * checkout -b) still succeeds. Controls: the same calls without the read-only points succeed.
 */
const ws = useTempWorkspace();
const GIT_ID = "-c user.name=t -c user.email=t@example.com";

function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_NOSYSTEM: "1", GIT_CONFIG_GLOBAL: "/dev/null" },
  });
}

function repository(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, "init", "-q", "-b", "main");
  writeFileSync(join(dir, "a.txt"), "a\n");
  git(dir, "add", "a.txt");
  git(dir, "commit", "-q", "-m", "first");
  return dir;
}

const tools = (home: string) => ({
  sandboxed: createBashTool({ sandbox: { enabled: true }, home }),
  unguarded: createBashTool({
    sandbox: { enabled: true },
    home,
    sandboxArgs: weakenedSandbox.noExecutionPoints,
  }),
});

async function run(tool: ReturnType<typeof createBashTool>, command: string, cwd = ws.root): Promise<string> {
  return resultText(await callTool(tool, { command }, { ...ws.context(), cwd }));
}

describe("R-S9: git inside the sandbox (real bwrap, real git)", () => {
  it("R-S9: add, commit, branch and checkout -b succeed inside the sandbox", async () => {
    const repo = repository(join(ws.root, "repo"));
    const { sandboxed } = tools(join(ws.root, "home"));
    const output = await run(
      sandboxed,
      `echo b > b.txt && git add b.txt && git ${GIT_ID} commit -q -m second && git branch side && git checkout -q -b feature && git log --format=%s && git branch --show-current`,
      repo,
    );
    expect(output).toBe("second\nfirst\nfeature");
    expect(git(repo, "log", "--format=%s", "side").trim()).toBe("second\nfirst");
  });

  it("R-S9: .git/config, .git/hooks, .git/info cannot be changed and .git cannot be swapped for another repository; without the read-only points they can (control)", async () => {
    const repo = repository(join(ws.root, "repo"));
    const attack = [
      "git config core.fsmonitor 'touch /tmp/pwned'",
      "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/post-commit",
      "echo '* filter=evil' > .git/info/attributes",
      "mv .git .git-old",
      "echo ok > src.txt",
    ].join("; ");
    const output = await run(tools(join(ws.root, "home")).sandboxed, attack, repo);
    expect(output.match(/Read-only file system|Device or resource busy/g)?.length, output).toBe(4);
    expect(readFileSync(join(repo, ".git/config"), "utf8")).not.toContain("fsmonitor");
    expect(existsSync(join(repo, ".git/hooks/post-commit"))).toBe(false);
    expect(existsSync(join(repo, ".git/info/attributes"))).toBe(false);
    expect(existsSync(join(repo, ".git/HEAD"))).toBe(true);
    expect(readFileSync(join(repo, "src.txt"), "utf8")).toBe("ok\n");
    // Control: without the read-only points every one of them is changed.
    await run(tools(join(ws.root, "home")).unguarded, attack, repo);
    expect(existsSync(join(repo, ".git-old/hooks/post-commit"))).toBe(true);
    expect(readFileSync(join(repo, ".git-old/config"), "utf8")).toContain("fsmonitor");
  });

  it("R-S9: the directory core.hooksPath names (missing: made empty first) and an included config file are read-only; without the points they are not (control)", async () => {
    const repo = repository(join(ws.root, "repo"));
    git(repo, "config", "core.hooksPath", ".githooks");
    git(repo, "config", "include.path", "../shared.gitconfig");
    writeFileSync(join(repo, "shared.gitconfig"), "[user]\n\tname = t\n");
    const attack =
      "mkdir -p .githooks; echo x > .githooks/pre-commit; echo '[core] fsmonitor = evil' >> shared.gitconfig";
    const output = await run(tools(join(ws.root, "home")).sandboxed, attack, repo);
    expect(output.match(/Read-only file system/g)?.length, output).toBe(2);
    expect(readdirSync(join(repo, ".githooks"))).toEqual([]);
    expect(readFileSync(join(repo, "shared.gitconfig"), "utf8")).not.toContain("fsmonitor");
    await run(tools(join(ws.root, "home")).unguarded, attack, repo);
    expect(readdirSync(join(repo, ".githooks"))).toEqual(["pre-commit"]);
    expect(readFileSync(join(repo, "shared.gitconfig"), "utf8")).toContain("fsmonitor");
  });

  it("R-S9: a linked worktree's gitfile, commondir and the main repository's hooks are read-only, while a commit in the worktree still works; control", async () => {
    const main = repository(join(ws.root, "main"));
    git(main, "worktree", "add", "-q", "-b", "wt-branch", join(ws.root, "wt"));
    const wt = join(ws.root, "wt");
    const attack = [
      "echo 'gitdir: /tmp/evil' > .git",
      `echo /tmp/evil > '${join(main, ".git/worktrees/wt/commondir")}'`,
      `echo x > '${join(main, ".git/hooks/post-commit")}'`,
    ].join("; ");
    const { sandboxed, unguarded } = tools(join(ws.root, "home"));
    const output = await run(
      sandboxed,
      `${attack}; echo c > c.txt && git add c.txt && git ${GIT_ID} commit -q -m wt && echo committed`,
      wt,
    );
    expect(output.match(/Read-only file system/g)?.length, output).toBe(3);
    expect(output).toMatch(/^committed\n/);
    expect(readFileSync(join(wt, ".git"), "utf8")).toMatch(/^gitdir: .*worktrees\/wt/);
    expect(git(main, "log", "--format=%s", "wt-branch").trim()).toBe("wt\nfirst");
    await run(unguarded, attack, wt);
    expect(readFileSync(join(wt, ".git"), "utf8")).toBe("gitdir: /tmp/evil\n");
  });

  it("R-S9: a repository the command makes where there was none keeps a plain `git init`, but one made with a hook or a program-running key is moved aside; unsandboxed it stays (control)", async () => {
    const plain = join(ws.root, "plain");
    const planted = join(ws.root, "planted");
    for (const dir of [plain, planted]) mkdirSync(dir);
    const { sandboxed } = tools(join(ws.root, "home"));
    expect(await run(sandboxed, "git init -q && echo made", plain)).toBe("made");
    expect(existsSync(join(plain, ".git/HEAD"))).toBe(true);
    const attack =
      "git init -q && printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/post-commit && chmod +x .git/hooks/post-commit";
    const output = await run(sandboxed, attack, planted);
    expect(output).toMatch(
      /made a git repository at .*planted whose hooks directory holds post-commit.*moved to .*\.git\.forkloop-blocked-/,
    );
    expect(existsSync(join(planted, ".git"))).toBe(false);
    const offDir = join(ws.root, "off");
    mkdirSync(offDir);
    await run(createBashTool({ home: join(ws.root, "home") }), attack, offDir);
    expect(existsSync(join(offDir, ".git/hooks/post-commit"))).toBe(true);
  });

  it("R-S9: a submodule's git directory under .git/modules keeps its hooks and config read-only; control", async () => {
    const repo = repository(join(ws.root, "repo"));
    mkdirSync(join(repo, ".git/modules"));
    git(repo, "init", "-q", `--separate-git-dir=${join(repo, ".git/modules/sub")}`, join(repo, "sub"));
    const attack = "echo x > .git/modules/sub/hooks/post-checkout; git -C sub config core.fsmonitor evil";
    const output = await run(tools(join(ws.root, "home")).sandboxed, attack, repo);
    expect(output, output).toMatch(/post-checkout: Read-only file system/);
    expect(existsSync(join(repo, ".git/modules/sub/hooks/post-checkout"))).toBe(false);
    expect(readFileSync(join(repo, ".git/modules/sub/config"), "utf8")).not.toContain("fsmonitor");
    await run(tools(join(ws.root, "home")).unguarded, attack, repo);
    expect(existsSync(join(repo, ".git/modules/sub/hooks/post-checkout"))).toBe(true);
    expect(readFileSync(join(repo, ".git/modules/sub/config"), "utf8")).toContain("fsmonitor");
  });

  it("R-S9: a .git/commondir a command creates in a main repository (moving config and hooks to a directory it wrote) is moved aside; with the sandbox off it stays (control)", async () => {
    const repo = repository(join(ws.root, "repo"));
    const home = join(ws.root, "home");
    const attack = "mkdir -p evil/hooks && cp .git/config evil/config && echo ../evil > .git/commondir";
    const output = await run(tools(home).sandboxed, attack, repo);
    expect(output).toMatch(/commondir.*moved to .*commondir\.forkloop-blocked-/s);
    expect(existsSync(join(repo, ".git", "commondir"))).toBe(false);
    expect(git(repo, "rev-parse", "--git-common-dir").trim()).toBe(".git");
    await run(createBashTool({ home }), attack, repo);
    expect(readFileSync(join(repo, ".git", "commondir"), "utf8")).toBe("../evil\n");
  });

  it("R-S9: a hard link planted in the workspace to .git/config or to a hook is read-only too (the bind holds a name, the link shares the inode); without the read-only points it writes through (control)", async () => {
    const repo = repository(join(ws.root, "repo"));
    writeFileSync(join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\nexit 0\n");
    linkSync(join(repo, ".git", "config"), join(repo, "notes.txt"));
    mkdirSync(join(repo, "docs"));
    linkSync(join(repo, ".git", "hooks", "pre-commit"), join(repo, "docs", "hook.txt"));
    const config = readFileSync(join(repo, ".git", "config"), "utf8");
    const attack =
      "echo '[core] fsmonitor = evil' >> notes.txt; echo evil >> docs/hook.txt; echo ok > other.txt";
    const output = await run(tools(join(ws.root, "home")).sandboxed, attack, repo);
    expect(output.match(/Read-only file system/g)?.length, output).toBe(2);
    expect(readFileSync(join(repo, ".git", "config"), "utf8")).toBe(config);
    expect(readFileSync(join(repo, ".git", "hooks", "pre-commit"), "utf8")).toBe("#!/bin/sh\nexit 0\n");
    expect(readFileSync(join(repo, "other.txt"), "utf8")).toBe("ok\n");
    await run(tools(join(ws.root, "home")).unguarded, attack, repo);
    expect(readFileSync(join(repo, ".git", "config"), "utf8")).toContain("fsmonitor = evil");
    expect(readFileSync(join(repo, ".git", "hooks", "pre-commit"), "utf8")).toContain("evil");
  });
});
