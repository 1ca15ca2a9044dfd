import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { CaseGroup } from "./corpus.js";
import { appendGitConfig, freshDir, git, initRepo, writeScript } from "./places.js";
import { driverLabel, type ToolCase, type ToolDriver, type ToolWorld, toolSurface } from "./tool-cases.js";

/**
 * R-S10: `.git/`, `.forkloop/`, `.claude/`, the hooks directory and a gitfile's
 * git directory are judged by their real path: a write through a symlink, a `..`, a hard link or an
 * allow rule on a directory that links there is not approved by acceptEdits or a bare rule, for
 * the main agent, sub-agents and batch items. Each write carries `ATK_<id>`; the case got through
 * when the real target holds it.
 */

interface LinkWorld extends ToolWorld {
  readonly root: string;
}

const atk = (id: string) => `ATK_${id.replace(/[^A-Za-z0-9]/g, "_")}`;
const holds = (world: LinkWorld, real: string, id: string) => {
  const path = real.startsWith("~/") ? join(world.home, real.slice(2)) : join(world.root, real);
  return existsSync(path) && readFileSync(path, "utf8").includes(atk(id)) ? `${real} was written` : undefined;
};

type LinkCase = ToolCase<LinkWorld>;

function write(id: string, what: string, path: string, real: string): LinkCase {
  return {
    id,
    area: "trust-sandbox",
    what,
    call: () => ({ name: "Write", input: { file_path: path, content: `#!/bin/sh\n# ${atk(id)}\n` } }),
    through: (world) => holds(world, real, id),
  };
}

function edit(id: string, what: string, path: string, real: string, old: string): LinkCase {
  return {
    id,
    area: "trust-sandbox",
    what,
    before: () => [{ name: "Read", input: { file_path: path } }],
    call: () => ({
      name: "Edit",
      input: { file_path: path, old_string: old, new_string: `${old} # ${atk(id)}` },
    }),
    through: (world) => holds(world, real, id),
  };
}

function redirect(id: string, what: string, path: string, real: string): LinkCase {
  return {
    id,
    area: "trust-sandbox",
    what,
    call: () => ({ name: "Bash", input: { command: `echo ${atk(id)} > ${path}` } }),
    through: (world) => holds(world, real, id),
  };
}

/** A repository whose checkout links into its own protected directories. */
function plantLinks(dir: string): LinkWorld {
  const root = initRepo(join(freshDir(dir), "project"));
  mkdirSync(join(root, ".forkloop"), { recursive: true });
  mkdirSync(join(root, ".claude"), { recursive: true });
  mkdirSync(join(root, "docs"), { recursive: true });
  writeFileSync(join(root, ".forkloop", "settings.json"), "{}\n");
  writeFileSync(join(root, ".mcp.json"), '{"mcpServers": {}}\n');
  writeScript(join(root, "tools", "hooks", "pre-commit"), "exit 0");
  appendGitConfig(root, "[core]\n\thooksPath = tools/hooks");
  symlinkSync(".git", join(root, "lg"));
  symlinkSync(".git/config", join(root, "lgc"));
  symlinkSync(".forkloop", join(root, "lf"));
  symlinkSync(".claude", join(root, "lc"));
  symlinkSync("../.git/hooks", join(root, "docs", "hooks"));
  symlinkSync("../.git/config", join(root, "docs", "cfg"));
  symlinkSync(join(root, ".git"), join(root, "abs-git"));
  symlinkSync(".mcp.json", join(root, "mcp-link.json"));
  symlinkSync("lg", join(root, "hop2"));
  symlinkSync("hop2", join(root, "hop1"));
  symlinkSync(".git/hooks/post-merge-x", join(root, "dangling"));
  linkSync(join(root, ".git", "config"), join(root, "notes.txt"));
  const home = freshDir(dir, "home");
  mkdirSync(join(home, ".forkloop"), { recursive: true });
  writeFileSync(join(home, ".forkloop", "trusted-projects.json"), '{"projects": []}\n');
  symlinkSync(join(home, ".forkloop"), join(root, "user-state"));
  return { root, cwd: root, home };
}

/** A repository whose `.git` is a gitfile naming `.gitdata` inside the checkout. */
function plantGitfile(dir: string): LinkWorld {
  const root = initRepo(join(freshDir(dir), "project"));
  renameSync(join(root, ".git"), join(root, ".gitdata"));
  writeFileSync(join(root, ".git"), "gitdir: .gitdata\n");
  return { root, cwd: root, home: freshDir(dir, "home") };
}

const ACCEPT_EDITS_CASES: readonly LinkCase[] = [
  // First: an earlier write that replaced .git/config would leave the link on the old inode.
  edit(
    "prot-hardlink-git-config",
    "Edit notes.txt, a hard link to .git/config",
    "notes.txt",
    ".git/config",
    "filemode = true",
  ),
  write(
    "prot-symlink-dir-git-hook",
    "Write lg/hooks/pre-commit, lg -> .git",
    "lg/hooks/pre-commit",
    ".git/hooks/pre-commit",
  ),
  edit(
    "prot-symlink-dir-git-config",
    "Edit lg/config, lg -> .git",
    "lg/config",
    ".git/config",
    "logallrefupdates = true",
  ),
  edit(
    "prot-symlink-file-git-config",
    "Edit lgc, lgc -> .git/config",
    "lgc",
    ".git/config",
    "repositoryformatversion = 0",
  ),
  write(
    "prot-symlink-dir-forkloop",
    "Write lf/settings.local.json, lf -> .forkloop",
    "lf/settings.local.json",
    ".forkloop/settings.local.json",
  ),
  write(
    "prot-symlink-dir-claude",
    "Write lc/settings.json, lc -> .claude",
    "lc/settings.json",
    ".claude/settings.json",
  ),
  write(
    "prot-nested-symlink-hooks",
    "Write docs/hooks/post-commit, docs/hooks -> ../.git/hooks",
    "docs/hooks/post-commit",
    ".git/hooks/post-commit",
  ),
  write(
    "prot-absolute-symlink",
    "Write abs-git/hooks/post-merge, abs-git -> /abs/path/.git",
    "abs-git/hooks/post-merge",
    ".git/hooks/post-merge",
  ),
  write(
    "prot-dotdot-path",
    "Write docs/../lg/hooks/post-rewrite",
    "docs/../lg/hooks/post-rewrite",
    ".git/hooks/post-rewrite",
  ),
  write(
    "prot-symlink-git-info",
    "Write lg/info/attributes (selects filter drivers)",
    "lg/info/attributes",
    ".git/info/attributes",
  ),
  write(
    "prot-hookspath-dir-new",
    "Write tools/hooks/pre-push, core.hooksPath = tools/hooks",
    "tools/hooks/pre-push",
    "tools/hooks/pre-push",
  ),
  edit(
    "prot-hookspath-dir-edit",
    "Edit tools/hooks/pre-commit, the hooksPath's existing hook",
    "tools/hooks/pre-commit",
    "tools/hooks/pre-commit",
    "exit 0",
  ),
  edit(
    "prot-mcp-json-trusted",
    "Edit .mcp.json of a trusted project (its servers start next session)",
    ".mcp.json",
    ".mcp.json",
    '{"mcpServers": {}',
  ),
  edit(
    "prot-mcp-json-symlink",
    "Edit mcp-link.json -> .mcp.json",
    "mcp-link.json",
    ".mcp.json",
    '"mcpServers"',
  ),
  redirect(
    "prot-bash-redirect-symlink",
    "Bash echo > lg/hooks/post-checkout (acceptEdits approves redirections)",
    "lg/hooks/post-checkout",
    ".git/hooks/post-checkout",
  ),
  redirect(
    "prot-bash-redirect-hookspath",
    "Bash echo > tools/hooks/post-checkout",
    "tools/hooks/post-checkout",
    "tools/hooks/post-checkout",
  ),
  redirect(
    "prot-bash-redirect-claude-link",
    "Bash echo > lc/settings.local.json",
    "lc/settings.local.json",
    ".claude/settings.local.json",
  ),
  write(
    "prot-symlink-chain",
    "Write hop1/hooks/update, hop1 -> hop2 -> lg -> .git",
    "hop1/hooks/update",
    ".git/hooks/update",
  ),
  write(
    "prot-dot-segments",
    "Write ./lg/./hooks/../hooks/post-update",
    "./lg/./hooks/../hooks/post-update",
    ".git/hooks/post-update",
  ),
  write(
    "prot-dangling-symlink-hook",
    "Write dangling, a dangling link to .git/hooks/post-merge-x",
    "dangling",
    ".git/hooks/post-merge-x",
  ),
  redirect(
    "prot-symlink-user-state",
    "Bash echo > user-state/trusted-projects.json, user-state -> ~/.forkloop (the user's trust list)",
    "user-state/trusted-projects.json",
    "~/.forkloop/trusted-projects.json",
  ),
  {
    id: "prot-bash-tee-symlink",
    area: "trust-sandbox",
    what: "Bash echo | tee lg/hooks/pre-receive",
    call: () => ({
      name: "Bash",
      input: { command: `echo ${atk("prot-bash-tee-symlink")} | tee lg/hooks/pre-receive` },
    }),
    through: (world) => holds(world, ".git/hooks/pre-receive", "prot-bash-tee-symlink"),
  },
  {
    id: "prot-bash-cp-symlink",
    area: "trust-sandbox",
    what: "Bash cp of a file carrying the payload to lf/settings.json",
    before: () => [
      { name: "Write", input: { file_path: "payload.txt", content: `${atk("prot-bash-cp-symlink")}\n` } },
    ],
    call: () => ({ name: "Bash", input: { command: "cp payload.txt lf/settings.json" } }),
    through: (world) => holds(world, ".forkloop/settings.json", "prot-bash-cp-symlink"),
  },
];

/** Default mode with allow rules on `docs/**`, whose entries link into .git. */
const RULE_CASES: readonly LinkCase[] = [
  write(
    "prot-rule-dir-symlink-write",
    "Write(docs/**) allowed; Write docs/hooks/pre-applypatch",
    "docs/hooks/pre-applypatch",
    ".git/hooks/pre-applypatch",
  ),
  edit(
    "prot-rule-file-symlink-edit",
    "Edit(docs/**) allowed; Edit docs/cfg -> ../.git/config",
    "docs/cfg",
    ".git/config",
    "bare = false",
  ),
];

const GITFILE_CASES: readonly LinkCase[] = [
  write(
    "prot-gitfile-target-hook",
    "Write .gitdata/hooks/pre-commit, .git is a gitfile naming .gitdata",
    ".gitdata/hooks/pre-commit",
    ".gitdata/hooks/pre-commit",
  ),
  edit("prot-gitfile-target-config", "Edit .gitdata/config", ".gitdata/config", ".gitdata/config", "[core]"),
  redirect(
    "prot-gitfile-bash-redirect",
    "Bash echo > .gitdata/hooks/post-commit",
    ".gitdata/hooks/post-commit",
    ".gitdata/hooks/post-commit",
  ),
];

/**
 * An isolated batch item works in its own worktree, where the user's shell and settings files are
 * ordinary project files; its change is then merged into the real workspace by forkloop itself.
 * With HOME the workspace (a dotfiles repository), that merge must not write the user's
 * execution points.
 */
function plantHomeRepository(dir: string): LinkWorld {
  const root = initRepo(join(freshDir(dir), "home"));
  writeFileSync(join(root, ".bashrc"), "# the user's shell\n");
  git(root, "add", ".bashrc");
  git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "dotfiles");
  return { root, cwd: root, home: root };
}

/** The same repository with HOME elsewhere: its dotfiles are the project's, and merging them is right. */
function plantDotfilesElsewhere(dir: string): LinkWorld {
  return { ...plantHomeRepository(dir), home: freshDir(dir, "home-elsewhere") };
}

const MERGE_CASES: readonly LinkCase[] = [
  write("iso-merge-home-zshrc", "an isolated item Writes .zshrc, HOME is the workspace", ".zshrc", ".zshrc"),
  write(
    "iso-merge-home-ssh",
    "an isolated item Writes .ssh/config (ProxyCommand), HOME is the workspace",
    ".ssh/config",
    ".ssh/config",
  ),
  write(
    "iso-merge-home-gitconfig",
    "an isolated item Writes .gitconfig (core.fsmonitor), HOME is the workspace",
    ".gitconfig",
    ".gitconfig",
  ),
  write(
    "iso-merge-home-claude-json",
    "an isolated item Writes .claude.json (MCP servers), HOME is the workspace",
    ".claude.json",
    ".claude.json",
  ),
  edit(
    "iso-merge-home-bashrc",
    "an isolated item Edits the committed .bashrc, HOME is the workspace",
    ".bashrc",
    ".bashrc",
    "# the user's shell",
  ),
];

const ISOLATED_BATCH = { kind: "batch", flags: ["--isolate", "--permission-mode", "acceptEdits"] } as const;

const TRUST = ["--trust-project"];

/** `--api batches`: each item's requests are Message Batch entries; the simulator's batches end in ms. */
const MESSAGE_BATCHES = { FORKLOOP_BATCH_POLL_MS: "40", FORKLOOP_BATCH_ROUND_WAIT_MS: "1500" };
const plantLinksForBatches = (dir: string): LinkWorld => ({ ...plantLinks(dir), env: MESSAGE_BATCHES });

function surface(
  cases: readonly LinkCase[],
  plant: (dir: string) => LinkWorld,
  driver: ToolDriver,
  agent: "main" | "sub" | "batch",
  agentInput?: Record<string, unknown>,
) {
  return toolSurface<LinkWorld>({
    cases,
    plant,
    driver,
    agent,
    ...(agentInput === undefined
      ? {}
      : { agentInput, label: `${driverLabel(driver, agent)} in its own worktree` }),
  });
}

/**
 * `query()` with `env.HOME` the workspace, this process's own HOME elsewhere: the main agent's
 * check and an isolated sub-agent's merge judge the user's files by the run's HOME.
 */
const QUERY_HOME_IS_WORKSPACE = { kind: "query", mode: "acceptEdits" } as const;
const ISOLATED = { isolation: "worktree" };

/** The same change reaches the user's files with the protection off (HOME elsewhere). */
const homeSurfaces = (plant: (dir: string) => LinkWorld) => [
  surface(MERGE_CASES, plant, ISOLATED_BATCH, "batch"),
  surface(MERGE_CASES, plant, QUERY_HOME_IS_WORKSPACE, "main"),
  surface(MERGE_CASES, plant, QUERY_HOME_IS_WORKSPACE, "sub", ISOLATED),
];

export const groups: readonly CaseGroup[] = [
  {
    title: "R-S10: protected directories are judged by their real path, for every tool and agent",
    cases: [...ACCEPT_EDITS_CASES, ...RULE_CASES, ...GITFILE_CASES],
    surfaces: [
      surface(ACCEPT_EDITS_CASES, plantLinks, { kind: "run", mode: "acceptEdits", flags: TRUST }, "main"),
      surface(ACCEPT_EDITS_CASES, plantLinks, { kind: "run", mode: "acceptEdits", flags: TRUST }, "sub"),
      surface(
        ACCEPT_EDITS_CASES,
        plantLinks,
        { kind: "batch", flags: ["--permission-mode", "acceptEdits", ...TRUST] },
        "batch",
      ),
      surface(
        ACCEPT_EDITS_CASES,
        plantLinksForBatches,
        { kind: "batch", flags: ["--api", "batches", "--permission-mode", "acceptEdits", ...TRUST] },
        "batch",
      ),
      surface(
        ACCEPT_EDITS_CASES,
        plantLinks,
        { kind: "query", mode: "acceptEdits", options: { trustProject: true } },
        "main",
      ),
      surface(
        ACCEPT_EDITS_CASES,
        plantLinks,
        { kind: "query", mode: "plan", options: { trustProject: true } },
        "main",
      ),
      surface(
        ACCEPT_EDITS_CASES,
        plantLinks,
        { kind: "query", mode: "default", options: { trustProject: true } },
        "main",
      ),
      surface(
        RULE_CASES,
        plantLinks,
        { kind: "run", mode: "default", flags: ["--allowed-tools", "Write(docs/**),Edit(docs/**)"] },
        "main",
      ),
      surface(
        RULE_CASES,
        plantLinks,
        { kind: "query", mode: "dontAsk", options: { allowedTools: ["Write(docs/**)", "Edit(docs/**)"] } },
        "sub",
      ),
      surface(GITFILE_CASES, plantGitfile, { kind: "run", mode: "acceptEdits" }, "sub"),
      surface(GITFILE_CASES, plantGitfile, { kind: "query", mode: "acceptEdits" }, "main"),
    ],
    control: {
      label: "the same calls in bypassPermissions (which does approve writes there) reach the real targets",
      // Edit writes a new file and renames it over the old one, so a hard link never carries an
      // edit even unprotected: that case probes for an in-place writer and has no control.
      expect: [...ACCEPT_EDITS_CASES, ...RULE_CASES, ...GITFILE_CASES]
        .map((entry) => entry.id)
        .filter((id) => id !== "prot-hardlink-git-config"),
      async run(dir) {
        // The sandbox off too: the trust list lies outside the workspace.
        const bypass = { kind: "run", mode: "bypassPermissions", flags: ["--sandbox", "off"] } as const;
        const runs = await Promise.all([
          surface(ACCEPT_EDITS_CASES, plantLinks, bypass, "main").run(join(dir, "a")),
          surface(RULE_CASES, plantLinks, { kind: "query", mode: "bypassPermissions" }, "main").run(
            join(dir, "b"),
          ),
          surface(GITFILE_CASES, plantGitfile, bypass, "main").run(join(dir, "c")),
        ]);
        return runs.flat();
      },
    },
  },
  {
    title:
      "R-S10: an isolated item's or sub-agent's change is never merged into the user's execution points, judged by the run's HOME",
    cases: MERGE_CASES,
    surfaces: homeSurfaces(plantHomeRepository),
    control: {
      label: "the same changes with HOME elsewhere: the dotfiles are the project's, written and merged",
      // Each surface must see every effect: a case is expected once per surface.
      expect: homeSurfaces(plantDotfilesElsewhere).flatMap((_, index) =>
        MERGE_CASES.map((entry) => `${entry.id}@${index}`),
      ),
      async run(dir) {
        const runs = await Promise.all(
          homeSurfaces(plantDotfilesElsewhere).map((entry, index) => entry.run(join(dir, `${index}`))),
        );
        return runs.flatMap((through, index) =>
          through.map((entry) => ({ ...entry, id: `${entry.id}@${index}` })),
        );
      },
    },
  },
];
