import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PermissionMode } from "@forkloop/loop-core";
import { describe, expect, it } from "vitest";
import { createBuiltinTools } from "../builtin-tools.js";
import { useTempWorkspace } from "../testing/index.js";
import { placedCopiesDirs, SHM_COPIES_DIR } from "../workspace-paths.js";
import { createPermissionChecker } from "./permission-checker.js";
import { protectedWriteTarget } from "./protected-paths.js";

/**
 * R-S10: what runs later is judged by its real path. Each attack is a write an edit mode would
 * approve if only the path as written were looked at (a committed symlink, a core.hooksPath
 * directory, a gitfile's git directory, .mcp.json); each has a baseline — the same tool on an
 * ordinary file through an ordinary symlink — that stays approved, so the refusal is about the
 * target, and the by-name judgement alone would approve every attack (checked below).
 */
const ws = useTempWorkspace();
const tools = createBuiltinTools();
const home = () => join(ws.root, "home");

function repository(): void {
  execFileSync("git", ["init", "-q", ws.root]);
  mkdirSync(join(ws.root, "src"));
  mkdirSync(join(ws.root, "tools/hooks"), { recursive: true });
  writeFileSync(join(ws.root, "src/a.ts"), "a\n");
  execFileSync("git", ["-C", ws.root, "config", "core.hooksPath", "tools/hooks"]);
  symlinkSync(".git", join(ws.root, "cfg"));
  symlinkSync(".forkloop", join(ws.root, "settings"));
  symlinkSync(".claude", join(ws.root, "claude-conf"));
  symlinkSync(".git/hooks/post-commit", join(ws.root, "new-hook"));
  symlinkSync("src", join(ws.root, "source"));
  // A nested work tree whose gitfile names a git directory that is not called .git.
  mkdirSync(join(ws.root, "vendor/lib"), { recursive: true });
  execFileSync("git", [
    "init",
    "-q",
    `--separate-git-dir=${join(ws.root, "vendor/lib.gitdir")}`,
    join(ws.root, "vendor/lib"),
  ]);
}

/** [name, tool, input] — every one must ask (and so be refused without a person) in acceptEdits. */
const ATTACKS: readonly (readonly [string, string, Record<string, unknown>])[] = [
  [
    "Write through a committed symlink to .git",
    "Write",
    { file_path: "cfg/hooks/pre-commit", content: "#!/bin/sh\n" },
  ],
  [
    "Edit through a committed symlink to .git/config",
    "Edit",
    { file_path: "cfg/config", old_string: "[core]", new_string: "[core]\n\tfsmonitor = x" },
  ],
  ["Write through a symlink to .forkloop", "Write", { file_path: "settings/settings.json", content: "{}" }],
  [
    "Write through a symlink to .claude",
    "Write",
    { file_path: "claude-conf/settings.local.json", content: "{}" },
  ],
  ["Write to a dangling symlink into .git/hooks", "Write", { file_path: "new-hook", content: "#!/bin/sh\n" }],
  [
    "Write into the core.hooksPath directory",
    "Write",
    { file_path: "tools/hooks/pre-commit", content: "#!/bin/sh\n" },
  ],
  [
    "Write into a gitfile's git directory",
    "Write",
    { file_path: "vendor/lib.gitdir/hooks/post-checkout", content: "#!/bin/sh\n" },
  ],
  [
    "Write over the gitfile itself",
    "Write",
    { file_path: "vendor/lib/.git", content: "gitdir: /tmp/evil\n" },
  ],
  ["Write the project's .mcp.json", "Write", { file_path: ".mcp.json", content: '{"mcpServers":{}}' }],
  [
    "NotebookEdit through a symlink into .git",
    "NotebookEdit",
    { notebook_path: "cfg/hooks/x.ipynb", new_source: "" },
  ],
  ["Bash redirect through a symlink into .git", "Bash", { command: "echo '#!/bin/sh' > cfg/hooks/pre-push" }],
  [
    "Bash redirect into the core.hooksPath directory",
    "Bash",
    { command: "echo x >> tools/hooks/pre-commit" },
  ],
];

const BASELINES: readonly (readonly [string, string, Record<string, unknown>])[] = [
  ["Write through an ordinary symlink", "Write", { file_path: "source/b.ts", content: "b\n" }],
  ["Edit of an ordinary file", "Edit", { file_path: "src/a.ts", old_string: "a", new_string: "b" }],
  ["Bash redirect to an ordinary file through a symlink", "Bash", { command: "echo b > source/c.ts" }],
];

async function decide(mode: PermissionMode, toolName: string, input: Record<string, unknown>) {
  const checker = createPermissionChecker({
    mode,
    rules: { allow: toolName === "NotebookEdit" ? ["NotebookEdit"] : [], ask: [], deny: [] },
    tools: [
      ...tools,
      { ...tools[0], name: "NotebookEdit", isReadOnly: () => false } as (typeof tools)[number],
    ],
    cwd: ws.root,
    workspaceRoots: [ws.root],
    home: home(),
  });
  const absolute = { ...input };
  for (const key of ["file_path", "notebook_path"])
    if (typeof absolute[key] === "string") absolute[key] = join(ws.root, absolute[key] as string);
  // What decided the call (R-K2) is the provenance test's subject, not these.
  const { decidedBy: _, ...decision } = await checker(toolName, absolute, {
    signal: new AbortController().signal,
    toolUseId: "t",
    agentId: "main",
  });
  return decision;
}

describe("R-S10: protected directories by real path", () => {
  for (const [name, tool, input] of ATTACKS) {
    it(`R-S10: ${name} is not approved by acceptEdits (nor by a bare ${tool} rule in default mode)`, async () => {
      repository();
      const decision = await decide("acceptEdits", tool, input);
      expect(decision.behavior, JSON.stringify(decision)).toBe("deny");
      expect(decision.behavior === "deny" && decision.message).toMatch(/run programs|needs approval/);
    });
  }

  for (const [name, tool, input] of BASELINES) {
    it(`R-S10 baseline: ${name} stays approved in acceptEdits`, async () => {
      repository();
      expect(await decide("acceptEdits", tool, input)).toEqual({ behavior: "allow" });
    });
  }

  it("R-S10: every attack's path is innocent as written — only its real path, hooksPath or gitfile names it (control for the by-name judgement)", () => {
    repository();
    const byName = (path: string) => /(^|\/)\.(git|forkloop|claude)(\/|$)/.test(path);
    const writes = ATTACKS.filter(([, tool]) => tool !== "Bash").map(
      ([, , input]) => (input.file_path ?? input.notebook_path) as string,
    );
    expect(writes.filter(byName)).toEqual(["vendor/lib/.git"]);
    for (const path of writes)
      expect(protectedWriteTarget(join(ws.root, path), { cwd: ws.root, home: home() }), path).toBeDefined();
  });

  it("R-S10: a rule naming the real path approves it (the user's own choice)", async () => {
    repository();
    const checker = createPermissionChecker({
      mode: "default",
      rules: { allow: ["Edit(/tools/hooks/**)"], ask: [], deny: [] },
      tools,
      cwd: ws.root,
      home: home(),
    });
    const decision = await checker(
      "Write",
      { file_path: join(ws.root, "tools/hooks/pre-commit"), content: "" },
      { signal: new AbortController().signal, toolUseId: "t", agentId: "main" },
    );
    expect(decision).toEqual({ behavior: "allow", decidedBy: { source: "config", reasonType: "rule" } });
  });
});

describe("R-S10, R-B2: a workspace root below forkloop's state directory", () => {
  /** A batch item's copy of the project, where forkloop keeps it: ~/.forkloop/…/workspaces/ID. */
  function itemWorkspace(): string {
    const workspace = join(home(), ".forkloop/projects/p/batches/b/workspaces/w1");
    mkdirSync(join(workspace, "src"), { recursive: true });
    mkdirSync(join(home(), ".forkloop/projects/p/batches/b/workspaces/w2"), { recursive: true });
    writeFileSync(join(workspace, "src/a.ts"), "a\n");
    return workspace;
  }

  it("R-B2: the item's own files are the project's: an edit there is not a write into forkloop's settings", async () => {
    const cwd = itemWorkspace();
    expect(protectedWriteTarget(join(cwd, "src/a.ts"), { cwd, home: home() })).toBeUndefined();
    const checker = createPermissionChecker({
      mode: "acceptEdits",
      rules: { allow: [], ask: [], deny: [] },
      tools,
      cwd,
      home: home(),
    });
    const decision = await checker(
      "Edit",
      { file_path: join(cwd, "src/a.ts"), old_string: "a", new_string: "b" },
      { signal: new AbortController().signal, toolUseId: "t", agentId: "main" },
    );
    expect(decision).toEqual({ behavior: "allow", decidedBy: { source: "config", reasonType: "mode" } });
  });

  it("R-S10: outside the item's root the state directory stays protected, and inside it the project's own settings and git directory do", () => {
    const cwd = itemWorkspace();
    const state = join(home(), ".forkloop");
    for (const path of [
      join(state, "settings.json"),
      join(state, "projects/p/batches/b/journal.log"),
      join(state, "projects/p/batches/b/workspaces/w2/src/a.ts"),
      join(cwd, "../w2/x.ts"),
    ])
      expect(protectedWriteTarget(path, { cwd, home: home() }), path).toContain(".forkloop");
    for (const name of [".forkloop/settings.json", ".claude/settings.json", ".git/hooks/pre-commit"])
      expect(protectedWriteTarget(join(cwd, name), { cwd, home: home() }), name).toBeDefined();
  });

  it("R-S10: a project whose directory is forkloop's state directory itself gets no such exception", () => {
    const cwd = join(home(), ".forkloop");
    mkdirSync(cwd, { recursive: true });
    expect(protectedWriteTarget(join(cwd, "settings.json"), { cwd, home: home() })).toBeDefined();
  });
});

describe("R-S10, R-B2: item copies a batch placed in memory", () => {
  /** Two items' copies where copies-placement.ts puts them on /dev/shm. */
  function placedCopies(): { own: string; other: string; done: () => void } {
    const batch = mkdtempSync(join(SHM_COPIES_DIR, "test-"));
    const own = join(batch, "w1");
    const other = join(batch, "w2");
    for (const dir of [own, other]) mkdirSync(join(dir, "src"), { recursive: true });
    return { own, other, done: () => rmSync(batch, { recursive: true, force: true }) };
  }

  it("R-S10: another item's copy is protected, the item's own copy is its project", () => {
    mkdirSync(SHM_COPIES_DIR, { recursive: true, mode: 0o700 });
    const copies = placedCopies();
    try {
      const context = { cwd: copies.own, home: home() };
      expect(protectedWriteTarget(join(copies.own, "src/a.ts"), context)).toBeUndefined();
      expect(protectedWriteTarget(join(copies.other, "src/a.ts"), context)).toContain("batch item copies");
      expect(protectedWriteTarget(join(copies.own, "../w2/src/a.ts"), context)).toContain(
        "batch item copies",
      );
    } finally {
      copies.done();
    }
  });

  it("R-B2: every place a batch may put its copies is covered: the temp directory, $XDG_RUNTIME_DIR, FORKLOOP_WORKSPACES_DIR and /dev/shm", () => {
    const dirs = placedCopiesDirs({ XDG_RUNTIME_DIR: "/run/user/7", FORKLOOP_WORKSPACES_DIR: "/scratch" });
    const name = SHM_COPIES_DIR.slice("/dev/shm/".length);
    expect(dirs).toEqual([join(tmpdir(), name), `/run/user/7/${name}`, `/scratch/${name}`, SHM_COPIES_DIR]);
    expect(placedCopiesDirs({ FORKLOOP_WORKSPACES_DIR: "batch" })).not.toContain(`batch/${name}`);
  });
});
