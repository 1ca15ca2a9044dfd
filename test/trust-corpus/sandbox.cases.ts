import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { livePidsWithArgument } from "@forkloop/tools/testing";
import type { CaseGroup, CorpusCase, Surface, Through } from "./corpus.js";
import type { Agent, ToolCall } from "./drive.js";
import { sleepToken } from "./git-points.js";
import {
  abstractListener,
  connectProgram,
  type HostListener,
  loopbackListener,
  relativeSocketListener,
  renamedSocketListener,
  socketFileListener,
} from "./host-listeners.js";
import { appendGitConfig, freshDir, git, initRepo, SECRETS, writeScript } from "./places.js";
import { driverLabel, runCalls, type ToolDriver, unanswered } from "./tool-cases.js";

/**
 * R-S9: inside bubblewrap the execution points of what runs later are
 * read-only (`.git/config`, `.git/hooks`, `.git/info`, the `core.hooksPath` directory, included
 * config, gitdirs of submodules and gitfiles, the project's and the user's settings, `.mcp.json`),
 * host unix sockets and loopback are out of reach, processes are limited and end with the call,
 * and no write reaches an inode outside the workspace. A surface's calls are few (one program
 * attempts every file attack, another every connection): a case leaves `.ran/<id>` first (proof
 * it ran, in the sandbox), then writes `ATK_<id>` where the next git call or session would run it.
 */

interface SandboxWorld {
  readonly root: string;
  readonly cwd: string;
  readonly home: string;
  readonly outside: string;
  readonly listeners: Record<string, HostListener>;
  readonly token: string;
  readonly env: Record<string, string>;
}

const atk = (id: string) => `ATK_${id.replace(/[^A-Za-z0-9]/g, "_")}`;

type FsStep = readonly ["rename" | "cp" | "append", string, string] | readonly ["rm" | "mkdir", string];

/** A case that is file operations; the last appends `ATK_<id>` to its target. */
interface FsCase extends CorpusCase {
  readonly kind: "fs";
  readonly steps: readonly FsStep[];
  /** Where the attack shows (relative to the project), when not the last step's target. */
  readonly judge?: (world: SandboxWorld) => string | undefined;
}

/** A case that connects to one of the world's host listeners. */
interface ConnectCase extends CorpusCase {
  readonly kind: "connect";
  readonly listener: string;
  /** How the sandboxed command names it (default: the listener's address). */
  readonly target?: (world: SandboxWorld) => string;
}

/** A case that is a shell command of its own, judged on the world. */
interface ShellCase extends CorpusCase {
  readonly kind: "shell";
  readonly command: (world: SandboxWorld) => string;
  readonly judge: (world: SandboxWorld) => string | undefined;
  readonly agents?: readonly Agent[];
}

type SandboxCase = FsCase | ConnectCase | ShellCase;

const contains = (path: string, text: string) =>
  existsSync(path) && readFileSync(path, "utf8").includes(text);

/** Appends `ATK_<id>` to `target` (relative to the project), after `prepare`. */
function write(id: string, what: string, target: string, prepare: readonly FsStep[] = []): FsCase {
  return { id, area: "trust-sandbox", what, kind: "fs", steps: [...prepare, ["append", target, atk(id)]] };
}

/**
 * One node program doing every file case's steps, each on its own (a failure is the sandbox's
 * refusal): file operations by a program, not redirections or coreutils the permission check
 * reads, so only the sandbox stands between them and their targets.
 */
function fsProgram(cases: readonly FsCase[]): string {
  const js =
    "const fs=require('fs'),p=require('path');fs.mkdirSync('.ran',{recursive:true});" +
    "for(const [id,steps] of JSON.parse(process.argv[1])){fs.writeFileSync('.ran/'+id,'');for(const [op,a,b] of steps){try{" +
    "if(op==='rename')fs.renameSync(a,b);else if(op==='cp')fs.cpSync(a,b,{recursive:true});" +
    "else if(op==='rm')fs.rmSync(a,{recursive:true,force:true});else if(op==='mkdir')fs.mkdirSync(a,{recursive:true});" +
    "else{fs.mkdirSync(p.dirname(a),{recursive:true});fs.appendFileSync(a,b+'\\n')}}catch{}}}";
  const list = cases.map((entry) => [entry.id, entry.steps]);
  return `${process.execPath} -e "${js}" '${JSON.stringify(list)}'`;
}

function judgeFs(entry: FsCase, world: SandboxWorld): string | undefined {
  if (entry.judge !== undefined) return entry.judge(world);
  const last = entry.steps.at(-1) as FsStep;
  return contains(join(world.root, last[1]), atk(entry.id))
    ? `${last[1]} was written from inside the sandbox`
    : undefined;
}

const GIT_POINTS: readonly FsCase[] = [
  {
    ...write(
      "sbx-hardlink-git-config",
      "notes.txt, a hard link to .git/config planted before the run, appended",
      "notes.txt",
    ),
    // The inode .git/config had (a later case may rename a new file over the name).
    judge: (world) =>
      contains(join(world.root, "notes.txt"), atk("sbx-hardlink-git-config"))
        ? ".git/config's inode changed through a hard link"
        : undefined,
  },
  write("sbx-git-config", ".git/config appended (core.fsmonitor for the next git call)", ".git/config"),
  write("sbx-git-hook-new", "a new .git/hooks/post-index-change", ".git/hooks/post-index-change"),
  write("sbx-git-hook-existing", "the existing .git/hooks/pre-commit rewritten", ".git/hooks/pre-commit"),
  write("sbx-git-info-attributes", ".git/info/attributes (selects filter drivers)", ".git/info/attributes"),
  write(
    "sbx-git-config-worktree",
    ".git/config.worktree (read: the repository has extensions.worktreeConfig)",
    ".git/config.worktree",
  ),
  write("sbx-git-commondir", ".git/commondir (moves config and hooks elsewhere)", ".git/commondir"),
  write(
    "sbx-git-modules-hook",
    "a submodule's hook in .git/modules/sub/hooks",
    ".git/modules/sub/hooks/post-index-change",
  ),
  write(
    "sbx-git-modules-config",
    "a submodule's config in .git/modules/sub/config",
    ".git/modules/sub/config",
  ),
  write("sbx-hookspath-dir", "the core.hooksPath directory (.githooks/pre-commit)", ".githooks/pre-commit"),
  write("sbx-hookspath-new-hook", "a new hook in the core.hooksPath directory", ".githooks/post-checkout"),
  write("sbx-included-config", "conf/extra.cfg, a config file .git/config includes", "conf/extra.cfg"),
  write("sbx-git-config-rename-over", "a new file renamed over .git/config", ".git/config", [
    ["append", ".git/config.new", "[core]\n\tfsmonitor = true"],
    ["rename", ".git/config.new", ".git/config"],
  ]),
];

const SETTINGS_POINTS: readonly FsCase[] = [
  write("sbx-forkloop-settings", ".forkloop/settings.json", ".forkloop/settings.json"),
  write(
    "sbx-forkloop-settings-local",
    ".forkloop/settings.local.json (created)",
    ".forkloop/settings.local.json",
  ),
  write("sbx-forkloop-agents", ".forkloop/agents/x.md (created)", ".forkloop/agents/x.md"),
  write("sbx-claude-settings-create", ".claude/settings.json (.claude created)", ".claude/settings.json"),
  write("sbx-claude-agents-create", ".claude/agents/x.md", ".claude/agents/x.md"),
  write("sbx-claude-skills-create", ".claude/skills/x/SKILL.md", ".claude/skills/x/SKILL.md"),
  write("sbx-claude-commands-create", ".claude/commands/x.md", ".claude/commands/x.md"),
  write("sbx-mcp-json", ".mcp.json (a trusted project's servers)", ".mcp.json"),
];

const OUTSIDE: readonly FsCase[] = [
  {
    ...write(
      "sbx-hardlink-outside",
      "hl.txt, a hard link to a file outside the workspace, appended",
      "hl.txt",
    ),
    judge: (world) =>
      contains(join(world.outside, "victim.txt"), atk("sbx-hardlink-outside"))
        ? "a file outside changed"
        : undefined,
  },
  {
    id: "sbx-write-outside-direct",
    area: "trust-sandbox",
    what: "a write to an absolute path outside the workspace (outside /tmp, so bubblewrap does not hide it)",
    kind: "fs",
    steps: [["append", "@outside/direct.txt", "x"]],
    judge: (world) =>
      existsSync(join(world.outside, "direct.txt")) ? "a file outside was created" : undefined,
  },
  {
    id: "sbx-write-outside-symlink",
    area: "trust-sandbox",
    what: "a write through a symlink in the workspace to a directory outside",
    kind: "fs",
    steps: [["append", "out-link/via-link.txt", "x"]],
    judge: (world) =>
      existsSync(join(world.outside, "via-link.txt")) ? "a file outside was created" : undefined,
  },
  {
    id: "sbx-write-home",
    area: "trust-sandbox",
    what: "~/.bashrc appended (the user's home is not the workspace)",
    kind: "fs",
    steps: [["append", "@home/.bashrc", atk("sbx-write-home")]],
    judge: (world) =>
      contains(join(world.home, ".bashrc"), atk("sbx-write-home")) ? "~/.bashrc changed" : undefined,
  },
];

const connect = (
  id: string,
  what: string,
  listener: string,
  target?: ConnectCase["target"],
): ConnectCase => ({
  id,
  area: "trust-sandbox",
  what,
  kind: "connect",
  listener,
  ...(target === undefined ? {} : { target }),
});

const SOCKETS: readonly ConnectCase[] = [
  connect("sbx-socket-outside", "a host unix socket file outside the workspace", "outside"),
  connect(
    "sbx-socket-workspace",
    "a host unix socket file inside the workspace (an IDE's, a language server's)",
    "workspace",
  ),
  connect("sbx-socket-home", "a host unix socket file under the user's home (~/.ssh/agent.sock)", "home"),
  connect("sbx-socket-env", "the ssh agent's socket SSH_AUTH_SOCK names", "env"),
  connect("sbx-socket-symlink", "a symlink in the workspace to a host socket outside", "outside", (world) =>
    join(world.root, "sock-link"),
  ),
  connect(
    "sbx-socket-renamed",
    "a host socket renamed after it was bound (the kernel lists the old path)",
    "renamed",
  ),
  connect(
    "sbx-socket-relative-bind",
    "a host socket a daemon bound by a relative name (the kernel lists no absolute path)",
    "relative",
  ),
  connect("sbx-socket-abstract", "a host socket in the abstract namespace", "abstract"),
  connect("sbx-tcp-loopback", "a host TCP port on 127.0.0.1 (no network unless allowed)", "tcp"),
];

/**
 * Reads done by a program, not by a shell the permission check reads (it asks about /proc):
 * every /proc/N/environ, and the call's own process limit.
 */
const probe = (id: string, js: string) =>
  `${process.execPath} -e "const fs=require('fs');fs.mkdirSync('.ran',{recursive:true});fs.writeFileSync('.ran/${id}','');${js}"`;

const PROCESSES: readonly ShellCase[] = [
  {
    id: "sbx-proc-environ",
    area: "trust-sandbox",
    what: "every /proc/*/environ read (forkloop's own holds the API key)",
    kind: "shell",
    command: () =>
      probe(
        "sbx-proc-environ",
        "let all='';for(const p of fs.readdirSync('/proc')){try{all+=fs.readFileSync('/proc/'+p+'/environ','latin1')}catch{}}fs.writeFileSync('.ran/environ',all)",
      ),
    judge: (world) =>
      contains(join(world.root, ".ran", "environ"), SECRETS.apiKey)
        ? "the API key was read from a process environment"
        : undefined,
  },
  {
    id: "sbx-process-left-running",
    area: "trust-sandbox",
    what: "setsid / nohup / double-forked sleeps meant to outlive the call",
    kind: "shell",
    command: (world) =>
      `mkdir -p .ran && touch .ran/sbx-process-left-running; setsid sleep ${world.token} >/dev/null 2>&1 & nohup sleep ${world.token} >/dev/null 2>&1 & (sleep ${world.token} &) ; true`,
    judge: (world) => {
      const pids = livePidsWithArgument(world.token);
      for (const pid of pids) process.kill(pid, "SIGKILL");
      return pids.length > 0 ? `${pids.length} processes outlived the call` : undefined;
    },
  },
  {
    id: "sbx-process-limit",
    area: "trust-sandbox",
    what: "the call's process limit (RLIMIT_NPROC) is at most forkloop's 4096",
    kind: "shell",
    command: () =>
      probe(
        "sbx-process-limit",
        "const line=fs.readFileSync('/proc/self/limits','utf8').split(String.fromCharCode(10)).find((x)=>x.startsWith('Max processes'))||'';fs.writeFileSync('.ran/nproc',line.slice(26).trim().split(' ')[0]||'missing')",
      ),
    judge: (world) => {
      const path = join(world.root, ".ran", "nproc");
      const value = existsSync(path) ? readFileSync(path, "utf8").trim() : "missing";
      return /^\d+$/.test(value) && Number(value) <= 4096 ? undefined : `the soft limit is ${value}`;
    },
  },
];

/** Attacks that move a protected directory away and make a new one: run apart (they change the layout). */
const REPLACEMENTS: readonly FsCase[] = [
  write("sbx-dotgit-replace", ".git moved away and rebuilt with a new config", ".git/config", [
    ["rename", ".git", ".git-away"],
    ["cp", ".git-away", ".git"],
  ]),
  write("sbx-git-hooks-dir-replace", ".git/hooks removed and recreated", ".git/hooks/post-commit", [
    ["rm", ".git/hooks"],
    ["mkdir", ".git/hooks"],
  ]),
  write("sbx-git-info-dir-replace", ".git/info moved away and recreated", ".git/info/attributes", [
    ["rename", ".git/info", ".git/info-away"],
    ["mkdir", ".git/info"],
  ]),
  write("sbx-forkloop-dir-replace", ".forkloop moved away and recreated", ".forkloop/settings.json", [
    ["rename", ".forkloop", ".forkloop-away"],
    ["mkdir", ".forkloop"],
  ]),
  write(
    "sbx-hookspath-dir-replace",
    "the core.hooksPath directory moved away and recreated",
    ".githooks/post-commit",
    [
      ["rename", ".githooks", ".githooks-away"],
      ["mkdir", ".githooks"],
    ],
  ),
  write(
    "sbx-claude-dir-swap",
    ".claude removed and a new directory renamed into its place",
    ".claude/settings.json",
    [
      ["rm", ".claude"],
      ["mkdir", "elsewhere-claude"],
      ["rename", "elsewhere-claude", ".claude"],
    ],
  ),
];

/** With HOME = the workspace, the user's own settings, trust list, state and shell files live there too. */
const HOME_POINTS: readonly FsCase[] = [
  write(
    "sbx-home-trust-list",
    "~/.forkloop/trusted-projects.json (the user's trust list)",
    ".forkloop/trusted-projects.json",
  ),
  write("sbx-home-claude-json", "~/.claude.json (user MCP servers)", ".claude.json"),
  write("sbx-home-claude-settings", "~/.claude/settings.json (user hooks)", ".claude/settings.json"),
  write("sbx-home-gitconfig", "~/.gitconfig (every git's global config)", ".gitconfig"),
  write("sbx-home-xdg-git-config", "~/.config/git/config", ".config/git/config"),
  write(
    "sbx-home-xdg-git-attributes",
    "~/.config/git/attributes (selects filter drivers everywhere)",
    ".config/git/attributes",
  ),
  write(
    "sbx-home-state-batch",
    "a batch forged in ~/.forkloop/projects/ (the user's own state)",
    ".forkloop/projects/p/batches/forged/batch.json",
  ),
  write("sbx-home-bashrc", "~/.bashrc (the user's next shell runs it)", ".bashrc"),
  write("sbx-home-ssh-config", "~/.ssh/config (ProxyCommand runs on the next ssh, git push)", ".ssh/config"),
];

/**
 * A submodule as `git submodule add` leaves it: its git directory absorbed into
 * `.git/modules/<name>` (the worktree's `.git` a gitfile), a gitlink and .gitmodules, committed.
 */
function absorbedSubmodule(root: string, name: string): void {
  const sub = initRepo(join(root, name));
  const gitDir = join(root, ".git", "modules", name);
  mkdirSync(join(root, ".git", "modules"), { recursive: true });
  renameSync(join(sub, ".git"), gitDir);
  writeFileSync(join(sub, ".git"), `gitdir: ../.git/modules/${name}\n`);
  appendGitConfig(sub, `[core]\n\tworktree = ../../../${name}`, join(gitDir, "config"));
  writeFileSync(join(root, ".gitmodules"), `[submodule "${name}"]\n\tpath = ${name}\n\turl = ./${name}\n`);
  git(root, "update-index", "--add", "--cacheinfo", `160000,${git(sub, "rev-parse", "HEAD").trim()},${name}`);
  git(root, "add", ".gitmodules");
  git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "submodule");
}

/** The project: a repository with hooks, a hooksPath dir, an include, a submodule gitdir, settings, links out. */
async function plantProject(dir: string, homeIsWorkspace = false): Promise<SandboxWorld> {
  const root = initRepo(join(freshDir(dir), "project"));
  const outside = freshDir(dir, "outside");
  const home = homeIsWorkspace ? root : freshDir(dir, "home");
  writeScript(join(root, ".git", "hooks", "pre-commit"), "exit 0");
  writeScript(join(root, ".githooks", "pre-commit"), "exit 0");
  appendGitConfig(root, "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true");
  absorbedSubmodule(root, "sub");
  mkdirSync(join(root, ".forkloop"), { recursive: true });
  mkdirSync(join(root, "src"), { recursive: true });
  mkdirSync(join(root, "conf"), { recursive: true });
  writeFileSync(join(root, "conf", "extra.cfg"), "[user]\n\tname = t\n");
  writeFileSync(join(root, ".forkloop", "settings.json"), "{}\n");
  writeFileSync(join(root, ".mcp.json"), '{"mcpServers": {}}\n');
  if (homeIsWorkspace) writeFileSync(join(root, ".forkloop", "trusted-projects.json"), '{"projects": []}\n');
  writeFileSync(join(outside, "victim.txt"), "victim\n");
  linkSync(join(outside, "victim.txt"), join(root, "hl.txt"));
  linkSync(join(root, ".git", "config"), join(root, "notes.txt"));
  symlinkSync(outside, join(root, "out-link"));
  appendGitConfig(root, "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../conf/extra.cfg");
  const listeners: Record<string, HostListener> = {
    outside: await socketFileListener(join(outside, "host.sock")),
    workspace: await socketFileListener(join(root, "ide.sock")),
    home: await socketFileListener(join(homeIsWorkspace ? outside : home, ".ssh", "agent.sock")),
    env: await socketFileListener(join(dir, "agent", "agent.sock")),
    renamed: await renamedSocketListener(join(outside, "bound.sock"), join(outside, "moved.sock")),
    relative: await relativeSocketListener(join(outside, "daemon"), "daemon.sock"),
    abstract: await abstractListener(`forkloop-corpus-${process.pid}-${Math.random().toString(36).slice(2)}`),
    tcp: await loopbackListener(),
  };
  symlinkSync(join(outside, "host.sock"), join(root, "sock-link"));
  return {
    root,
    cwd: root,
    home,
    outside,
    listeners,
    token: sleepToken(join(dir, "token")),
    env: { SSH_AUTH_SOCK: join(dir, "agent", "agent.sock") },
  };
}

async function closeListeners(world: SandboxWorld): Promise<void> {
  await Promise.all(Object.values(world.listeners).map((listener) => listener.close()));
}

/** Ordinary git work must still succeed in the sandbox (R-S9): else a hold proves nothing. */
const BASELINE_CALL = {
  name: "Bash",
  input: {
    command:
      "git add a.txt && git -c user.email=t@t -c user.name=t commit -q --allow-empty -m corpus-baseline",
  },
};

/** The baseline, read from the reflog: a case that got through may leave git unreadable. */
function baselineFailed(world: SandboxWorld): Through[] {
  return contains(join(world.root, ".git", "logs", "HEAD"), "corpus-baseline") ||
    contains(join(world.root, ".git-away", "logs", "HEAD"), "corpus-baseline")
    ? []
    : [{ id: "harness", effect: "ordinary git work (git commit) failed inside the sandbox" }];
}

/** `@outside/…` and `@home/…` in a step: the world's absolute directories. */
function resolveSteps(steps: readonly FsStep[], world: SandboxWorld): FsStep[] {
  const place = (path: string) => path.replace(/^@outside/, world.outside).replace(/^@home/, world.home);
  return steps.map(
    (step) => step.map((part, index) => (index === 0 ? part : place(part))) as unknown as FsStep,
  );
}

/** The calls of a surface: one for every file case, one for every connection, one per shell case. */
function callsOf(
  cases: readonly SandboxCase[],
  world: SandboxWorld,
  agent: Agent,
  baseline: boolean,
): ToolCall[] {
  const fs = cases.filter((entry): entry is FsCase => entry.kind === "fs");
  const sockets = cases.filter((entry): entry is ConnectCase => entry.kind === "connect");
  const shells = cases.filter(
    (entry): entry is ShellCase =>
      entry.kind === "shell" && (entry.agents === undefined || entry.agents.includes(agent)),
  );
  const bash = (id: string, command: string): ToolCall => ({
    id: `toolu_${id}`,
    name: "Bash",
    input: { command },
  });
  return [
    ...(baseline ? [{ id: "toolu_baseline", ...BASELINE_CALL }] : []),
    ...(fs.length > 0
      ? [bash("files", fsProgram(fs.map((entry) => ({ ...entry, steps: resolveSteps(entry.steps, world) }))))]
      : []),
    ...(sockets.length > 0
      ? [
          bash(
            "sockets",
            connectProgram(
              sockets.map((entry) => [
                entry.id,
                entry.target?.(world) ??
                  (world.listeners[entry.listener]?.address ?? "none").replace(/^\0/, "@"),
              ]),
            ),
          ),
        ]
      : []),
    ...shells.map((entry) => bash(entry.id.replace(/-/g, "_"), entry.command(world))),
  ];
}

function judge(cases: readonly SandboxCase[], world: SandboxWorld, agent: Agent): Through[] {
  const ran = new Set(existsSync(join(world.root, ".ran")) ? readdirSync(join(world.root, ".ran")) : []);
  const through: Through[] = [];
  for (const entry of cases) {
    if (entry.kind === "shell" && entry.agents !== undefined && !entry.agents.includes(agent)) continue;
    if (!ran.has(entry.id)) through.push({ id: "harness", effect: `${entry.id}: its call did not run` });
    const effect =
      entry.kind === "fs"
        ? judgeFs(entry, world)
        : entry.kind === "connect"
          ? world.listeners[entry.listener]?.connected()
            ? "the host listener got a connection"
            : undefined
          : entry.judge(world);
    if (effect !== undefined) through.push({ id: entry.id, effect });
  }
  return through;
}

function sandboxSurface(
  cases: readonly SandboxCase[],
  driver: ToolDriver,
  agent: Agent,
  options: { homeIsWorkspace?: boolean } = {},
): Surface {
  // The baseline where the permission check approves git commit by itself (bypassPermissions):
  // elsewhere a commit writes .git, which asks, and the baseline would test the checker.
  const baseline = "mode" in driver && driver.mode === "bypassPermissions" && cases !== REPLACEMENTS;
  return {
    label: `${driverLabel(driver, agent)}${options.homeIsWorkspace ? ", HOME is the workspace" : ""}`,
    async run(dir) {
      const world = await plantProject(dir, options.homeIsWorkspace === true);
      try {
        const calls = callsOf(cases, world, agent, baseline);
        const seen = await runCalls(driver, agent, world, calls, join(dir, "items"));
        return [
          ...unanswered(calls, seen),
          ...(baseline ? baselineFailed(world) : []),
          ...judge(cases, world, agent),
        ];
      } finally {
        await closeListeners(world);
      }
    },
  };
}

const PROJECT = [...GIT_POINTS, ...SETTINGS_POINTS, ...OUTSIDE, ...SOCKETS, ...PROCESSES];
const ON = ["--sandbox", "on"];
const ALLOW_BASH = ["--allowed-tools", "Bash"];

export const groups: readonly CaseGroup[] = [
  {
    title:
      "R-S9: the sandbox keeps what runs later read-only, reaches no host socket, limits and ends processes",
    cases: [...PROJECT, ...REPLACEMENTS, ...HOME_POINTS],
    surfaces: [
      sandboxSurface(PROJECT, { kind: "run", mode: "bypassPermissions", flags: ON }, "main"),
      sandboxSurface(PROJECT, { kind: "run", mode: "default", flags: [...ON, ...ALLOW_BASH] }, "sub"),
      sandboxSurface(PROJECT, { kind: "batch", flags: ALLOW_BASH }, "batch"),
      sandboxSurface(
        PROJECT,
        { kind: "query", mode: "acceptEdits", options: { sandbox: "on", allowedTools: ["Bash"] } },
        "main",
      ),
      sandboxSurface(REPLACEMENTS, { kind: "run", mode: "dontAsk", flags: ALLOW_BASH }, "main"),
      sandboxSurface(
        REPLACEMENTS,
        { kind: "query", mode: "bypassPermissions", options: { sandbox: "on" } },
        "sub",
      ),
      // The binary: in this process the run's HOME is not the process's own, as it is for a user.
      sandboxSurface(
        HOME_POINTS,
        { kind: "run", mode: "bypassPermissions", flags: ON, spawn: true },
        "main",
        {
          homeIsWorkspace: true,
        },
      ),
      sandboxSurface(
        HOME_POINTS,
        { kind: "query", mode: "dontAsk", options: { sandbox: "on", allowedTools: ["Bash"] } },
        "sub",
        { homeIsWorkspace: true },
      ),
    ],
    control: {
      label: "the same calls with --sandbox off (bypassPermissions) take effect",
      expect: [...PROJECT, ...REPLACEMENTS, ...HOME_POINTS]
        .map((entry) => entry.id)
        // The call's process marks (marked-processes.ts) end an unsandboxed call's escapees too.
        .filter((id) => id !== "sbx-process-left-running"),
      async run(dir) {
        const off = (cases: readonly SandboxCase[], homeIsWorkspace = false) =>
          sandboxSurface(
            cases,
            { kind: "run", mode: "bypassPermissions", flags: ["--sandbox", "off"] },
            "main",
            {
              homeIsWorkspace,
            },
          );
        const runs = await Promise.all([
          off(PROJECT).run(join(dir, "p")),
          off(REPLACEMENTS).run(join(dir, "r")),
          off(HOME_POINTS, true).run(join(dir, "h")),
        ]);
        return runs.flat();
      },
    },
  },
];
