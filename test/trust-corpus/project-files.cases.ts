import { execFileSync, spawn } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  readFileSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { dirname, join, relative } from "node:path";
import type { CaseGroup, CorpusCase, Surface, Through } from "./corpus.js";
import {
  batchArgs,
  MODES,
  type Mode,
  modeFlags,
  modeOptions,
  runCliAgainst,
  runQueryAgainst,
  type Seen,
  TEXT_ONLY,
} from "./drive.js";
import { freshDir, initRepo, SECRETS, touchPayload } from "./places.js";
import { inBatches } from "./run-units.js";

/**
 * R-S8: project content — memory files and their imports, skills, agent
 * definitions, commands, settings, `.mcp.json` — is read as the Read tool reads: by its real path
 * inside the workspace (or the user's own directories for user files), regular files only, link
 * count 1, size-capped. Leaks are judged on what the simulator was sent; files that hang or kill
 * session start (FIFOs, devices, sockets, huge files) on whether the run starts and ends.
 */

export interface Project {
  readonly root: string;
  /** Where the run starts: three levels below the root, so memory files are read at four levels. */
  readonly cwd: string;
  readonly outside: string;
  readonly home: string;
  /** Per case: the text that must not reach the model. */
  readonly secrets: Map<string, string>;
}

/** A file outside the workspace holding this case's secret (optionally wrapped as frontmatter). */
export function outsideSecret(
  project: Project,
  id: string,
  wrap: (secret: string) => string = (s) => `${s}\n`,
): string {
  const secret = `LEAK_${id.replace(/[^A-Za-z0-9]/g, "_")}_${SECRETS.outside}`;
  project.secrets.set(id, secret);
  const path = join(project.outside, `${id}.md`);
  writeFileSync(path, wrap(secret));
  return path;
}

export const skillText = (secret: string) =>
  `---\nname: leaked-${secret
    .slice(5, 30)
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")}\ndescription: ${secret}\n---\nDo it.\n`;
export const agentText = (name: string) => (secret: string) =>
  `---\nname: ${name}\ndescription: ${secret}\n---\nYou are ${name}.\n`;

export function link(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  symlinkSync(target, path);
}

export function hardLink(target: string, path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  linkSync(target, path);
}

/** The first line of this process's starting environment that no prompt would hold by chance. */
const STARTING_PATH =
  readFileSync("/proc/self/environ", "utf8")
    .split("\0")
    .find((entry) => entry.startsWith("PATH=")) ?? "PATH=";

export interface LeakCase extends CorpusCase {
  /** Plants the case; `secret` registers what must not be sent (outsideSecret does it for files). */
  readonly plant: (project: Project) => void;
  /** Environment cases: what in the requests shows this process's (or the CLI's) environment. */
  readonly environ?: true;
}

export const leak = (
  id: string,
  what: string,
  plant: (project: Project) => void,
  environ?: true,
): LeakCase => ({
  id,
  area: "trust-git-files",
  what,
  plant,
  ...(environ ? { environ } : {}),
});

export const at = (project: Project, level: number, name: string) =>
  join(project.root, ...["l1", "l2", "l3"].slice(0, level), name);

/** Memory files at every level of the chain (root … cwd), each slot a different trick. */
const LEAK_CASES: readonly LeakCase[] = [
  leak(
    "mem-symlink-proc-environ",
    "CLAUDE.md -> /proc/self/environ (the API key into every system prompt, no tool call)",
    (p) => link("/proc/self/environ", at(p, 0, "CLAUDE.md")),
    true,
  ),
  leak("mem-symlink-outside-absolute", "AGENTS.md -> an absolute path outside", (p) =>
    link(outsideSecret(p, "mem-symlink-outside-absolute"), at(p, 0, "AGENTS.md")),
  ),
  leak("mem-hardlink-outside", "MEMORY.md is a hard link to a file outside", (p) =>
    hardLink(outsideSecret(p, "mem-hardlink-outside"), at(p, 0, "MEMORY.md")),
  ),
  leak("mem-symlink-dotdot", "l1/CLAUDE.md -> ../../outside/… (a relative link climbing out)", (p) => {
    const target = outsideSecret(p, "mem-symlink-dotdot");
    link(relative(dirname(at(p, 1, "CLAUDE.md")), target), at(p, 1, "CLAUDE.md"));
  }),
  leak(
    "mem-symlink-thread-self-environ",
    "l1/AGENTS.md -> /proc/thread-self/environ",
    (p) => link("/proc/thread-self/environ", at(p, 1, "AGENTS.md")),
    true,
  ),
  leak("mem-symlink-proc-self-root", "l1/MEMORY.md -> /proc/self/root/<outside file>", (p) =>
    link(join("/proc/self/root", outsideSecret(p, "mem-symlink-proc-self-root")), at(p, 1, "MEMORY.md")),
  ),
  leak(
    "mem-symlink-proc-self-cwd",
    "l2/CLAUDE.md -> /proc/self/cwd/../…/outside (relative to the process)",
    (p) => {
      const target = outsideSecret(p, "mem-symlink-proc-self-cwd");
      // Not path.join: it would resolve the ".." lexically, before the kernel follows /proc/self/cwd.
      link(`/proc/self/cwd/${relative(p.cwd, target)}`, at(p, 2, "CLAUDE.md"));
    },
  ),
  leak("mem-symlink-home-secret", "l2/AGENTS.md -> ~/.ssh/id_rsa (a user file, from a project file)", (p) => {
    const secret = `LEAK_home_ssh_${SECRETS.outside}`;
    p.secrets.set("mem-symlink-home-secret", secret);
    mkdirSync(join(p.home, ".ssh"), { recursive: true });
    writeFileSync(join(p.home, ".ssh", "id_rsa"), `${secret}\n`);
    link(join(p.home, ".ssh", "id_rsa"), at(p, 2, "AGENTS.md"));
  }),
  leak("mem-symlink-chain", "l2/MEMORY.md -> an in-workspace link -> another -> outside", (p) => {
    const target = outsideSecret(p, "mem-symlink-chain");
    link(target, join(p.root, "docs", "hop2"));
    link(join(p.root, "docs", "hop2"), join(p.root, "docs", "hop1"));
    link(join(p.root, "docs", "hop1"), at(p, 2, "MEMORY.md"));
  }),
  leak(
    "mem-symlink-to-inside-hardlink",
    "l3/AGENTS.md -> an in-workspace file that is a hard link to outside",
    (p) => {
      hardLink(outsideSecret(p, "mem-symlink-to-inside-hardlink"), join(p.root, "docs", "notes.md"));
      link(join(p.root, "docs", "notes.md"), at(p, 3, "AGENTS.md"));
    },
  ),
  leak("mem-symlink-system-file", "l3/MEMORY.md -> /etc/passwd", (p) => {
    p.secrets.set("mem-symlink-system-file", "root:x:0:0:");
    link("/etc/passwd", at(p, 3, "MEMORY.md"));
  }),
  ...[
    [
      "mem-import-dotdot",
      (p: Project) => `@${relative(dirname(at(p, 3, "CLAUDE.md")), outsideSecret(p, "mem-import-dotdot"))}`,
    ],
    ["mem-import-absolute", (p: Project) => `@${outsideSecret(p, "mem-import-absolute")}`],
    [
      "mem-import-home",
      (p: Project) => {
        const secret = `LEAK_home_import_${SECRETS.outside}`;
        p.secrets.set("mem-import-home", secret);
        mkdirSync(join(p.home, ".aws"), { recursive: true });
        writeFileSync(join(p.home, ".aws", "credentials"), `${secret}\n`);
        return "@~/.aws/credentials";
      },
    ],
    [
      "mem-import-inside-link",
      (p: Project) => {
        link(outsideSecret(p, "mem-import-inside-link"), join(p.root, "docs", "imported.md"));
        return `@${relative(dirname(at(p, 3, "CLAUDE.md")), join(p.root, "docs", "imported.md"))}`;
      },
    ],
  ].map(([id, line]) =>
    leak(id as string, `an import in l3/CLAUDE.md: ${id}`, (p) => {
      writeFileSync(at(p, 3, "CLAUDE.md"), `${(line as (p: Project) => string)(p)}\n`, { flag: "a" });
    }),
  ),
  leak(
    "mem-import-proc-environ",
    "an import in l3/CLAUDE.md: @/proc/self/environ",
    (p) => writeFileSync(at(p, 3, "CLAUDE.md"), "@/proc/self/environ\n", { flag: "a" }),
    true,
  ),
  leak(
    "skill-symlink-outside",
    ".claude/skills/a/SKILL.md -> a file outside (its description is listed)",
    (p) =>
      link(
        outsideSecret(p, "skill-symlink-outside", skillText),
        join(p.root, ".claude", "skills", "a", "SKILL.md"),
      ),
  ),
  leak("skill-dir-symlink-outside", ".claude/skills/b -> a directory outside", (p) => {
    const dir = join(p.outside, "skill-b");
    mkdirSync(dir);
    writeFileSync(join(dir, "SKILL.md"), skillText(secretFor(p, "skill-dir-symlink-outside")));
    link(dir, join(p.root, ".claude", "skills", "b"));
  }),
  leak("skills-root-symlink-outside", ".forkloop/skills -> a directory of skills outside", (p) => {
    const dir = join(p.outside, "skills-root", "c");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "SKILL.md"), skillText(secretFor(p, "skills-root-symlink-outside")));
    link(join(p.outside, "skills-root"), join(p.root, ".forkloop", "skills"));
  }),
  leak("skill-hardlink-outside", ".claude/skills/d/SKILL.md is a hard link to a file outside", (p) =>
    hardLink(
      outsideSecret(p, "skill-hardlink-outside", skillText),
      join(p.root, ".claude", "skills", "d", "SKILL.md"),
    ),
  ),
  leak(
    "agent-symlink-outside",
    ".claude/agents/leaky.md -> a file outside (its description is listed)",
    (p) =>
      link(
        outsideSecret(p, "agent-symlink-outside", agentText("leaky")),
        join(p.root, ".claude", "agents", "leaky.md"),
      ),
  ),
  leak("agents-dir-symlink-outside", ".forkloop/agents -> a directory outside", (p) => {
    const dir = join(p.outside, "agents");
    mkdirSync(dir);
    writeFileSync(join(dir, "far.md"), agentText("far")(secretFor(p, "agents-dir-symlink-outside")));
    link(dir, join(p.root, ".forkloop", "agents"));
  }),
  leak("agent-hardlink-outside", ".claude/agents/linked.md is a hard link to a file outside", (p) =>
    hardLink(
      outsideSecret(p, "agent-hardlink-outside", agentText("linked")),
      join(p.root, ".claude", "agents", "linked.md"),
    ),
  ),
  leak("command-symlink-outside", ".claude/commands/x.md -> a file outside", (p) =>
    link(outsideSecret(p, "command-symlink-outside"), join(p.root, ".claude", "commands", "x.md")),
  ),
];

/** Registers and returns a secret for a case whose outside file is written by the case itself. */
export function secretFor(project: Project, id: string): string {
  const secret = `LEAK_${id.replace(/[^A-Za-z0-9]/g, "_")}_${SECRETS.outside}`;
  project.secrets.set(id, secret);
  return secret;
}

function newProject(dir: string): Project {
  const root = initRepo(join(freshDir(dir), "project"));
  const cwd = join(root, "l1", "l2", "l3");
  mkdirSync(cwd, { recursive: true });
  return { root, cwd, outside: freshDir(dir, "outside"), home: freshDir(dir, "home"), secrets: new Map() };
}

function plantLeaks(dir: string, cases: readonly LeakCase[]): Project {
  const project = newProject(dir);
  for (const entry of cases) entry.plant(project);
  return project;
}

function judgeLeaks(
  cases: readonly LeakCase[],
  project: Project,
  seen: Seen,
  environ: readonly string[],
): Through[] {
  const through: Through[] = [];
  if (seen.code !== 0 || seen.requestCount === 0)
    through.push({
      id: "harness",
      effect: `the run itself failed (exit ${seen.code}): ${seen.stderr.slice(-600)}`,
    });
  for (const entry of cases) {
    const secret = project.secrets.get(entry.id);
    if (secret !== undefined && seen.requests.includes(secret))
      through.push({ id: entry.id, effect: "its content from outside the workspace was sent to the model" });
    if (entry.environ && environ.some((value) => seen.requests.includes(value)))
      through.push({
        id: entry.id,
        effect: "a process environment (one of the /proc environ cases) was sent",
      });
  }
  return through;
}

const CLI_ENVIRON = [SECRETS.apiKey, SECRETS.authToken];

function cliLeakSurface(
  cases: readonly LeakCase[],
  label: string,
  args: (dir: string) => string[],
  spawn = false,
): Surface {
  return {
    label: `${label}, links planted at every level`,
    async run(dir) {
      const project = plantLeaks(dir, cases);
      const seen = await runCliAgainst(args(dir), {
        cwd: project.cwd,
        home: project.home,
        scenario: TEXT_ONLY,
        ...(spawn ? { spawn } : {}),
      });
      // In this process /proc/self/environ is the test's: its PATH line shows it was read.
      return judgeLeaks(cases, project, seen, spawn ? CLI_ENVIRON : [STARTING_PATH, ...CLI_ENVIRON]);
    },
  };
}

const queryLeakSurface = (cases: readonly LeakCase[]): Surface => ({
  label: "query() from @forkloop/sdk in every mode, links planted at every level",
  async run(dir) {
    const results = await inBatches(MODES, 5, async (mode: Mode) => {
      const project = plantLeaks(join(dir, mode), cases);
      const seen = await runQueryAgainst(
        { ...modeOptions(mode), settingSources: ["user", "project", "local"] },
        {
          cwd: project.cwd,
          home: project.home,
          scenario: TEXT_ONLY,
        },
      );
      return judgeLeaks(cases, project, seen, [STARTING_PATH, ...CLI_ENVIRON]).map((entry) => ({
        ...entry,
        effect: `${mode}: ${entry.effect}`,
      }));
    });
    return results.flat();
  },
});

/**
 * Files that hang or kill session start. Each group of them gets its own CLI run (a hang stops
 * everything after it); the run must start, send its request and end.
 */
export interface StartCase extends CorpusCase {
  /** Plants the file; a socket case adds how to close it to `closers`. */
  readonly plant: (project: Project, closers: (() => void)[]) => void;
  /** The planted path, for the control's plain read. */
  readonly path?: (project: Project) => string;
}

export const start = (
  id: string,
  what: string,
  path: (project: Project) => string,
  plant: (path: string, project: Project, closers: (() => void)[]) => void,
): StartCase => ({
  id,
  area: "trust-git-files",
  what,
  path,
  plant: (project, closers) => plant(path(project), project, closers),
});

/** A trusted project's file planted as a link or with a program (no plain-read control). */
const trustedLink = (id: string, what: string, plant: StartCase["plant"]): StartCase => ({
  id,
  area: "trust-git-files",
  what,
  plant,
});

export function fifo(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync("mkfifo", [path]);
}

/** A unix socket bound at `path` by this process; closed by the returned function. */
export function socketFile(path: string): () => void {
  mkdirSync(dirname(path), { recursive: true });
  const server = createServer(() => {}).listen(path);
  return () => server.close();
}

export function sparse(path: string, bytes: number): void {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync("truncate", ["-s", String(bytes), path]);
}

/** Files that hang or kill session start, run together: a hang stops everything after it. */
export interface StartSet {
  readonly name: string;
  readonly trust?: true;
  /** Refusing the file is exit 2 naming it (settings: fail fast), not a skip. */
  readonly refusalExits?: true;
  readonly cases: readonly StartCase[];
}

const START_SETS: readonly StartSet[] = [
  {
    name: "memory files",
    cases: [
      start("mem-fifo", "CLAUDE.md is a FIFO (a read blocks for ever)", (p) => at(p, 0, "CLAUDE.md"), fifo),
      start(
        "mem-dev-zero",
        "l1/AGENTS.md -> /dev/zero (endless)",
        (p) => at(p, 1, "AGENTS.md"),
        (path) => link("/dev/zero", path),
      ),
      start(
        "mem-dev-urandom",
        "l2/MEMORY.md -> /dev/urandom",
        (p) => at(p, 2, "MEMORY.md"),
        (path) => link("/dev/urandom", path),
      ),
      start(
        "mem-socket",
        "l3/CLAUDE.md is a unix socket",
        (p) => at(p, 3, "CLAUDE.md"),
        (path, _p, closers) => closers.push(socketFile(path)),
      ),
      start(
        "mem-huge-sparse",
        "l3/AGENTS.md is a 3 GB sparse file",
        (p) => at(p, 3, "AGENTS.md"),
        (path) => sparse(path, 3 * 1024 ** 3),
      ),
      start(
        "mem-symlink-loop",
        "l3/MEMORY.md -> itself (ELOOP)",
        (p) => at(p, 3, "MEMORY.md"),
        (path) => link("MEMORY.md", path),
      ),
      start(
        "mem-import-device-link",
        "l2/CLAUDE.md imports @zero.md, a link to /dev/zero",
        (p) => at(p, 2, "zero.md"),
        (path, p) => {
          link("/dev/zero", path);
          writeFileSync(at(p, 2, "CLAUDE.md"), "@zero.md\n");
        },
      ),
      start(
        "mem-symlink-outside-fifo",
        "l1/CLAUDE.md -> a FIFO outside the workspace",
        (p) => at(p, 1, "CLAUDE.md"),
        (path, p) => {
          fifo(join(p.outside, "pipe"));
          link(join(p.outside, "pipe"), path);
        },
      ),
    ],
  },
  {
    name: "skills and agents",
    cases: [
      start(
        "skill-fifo",
        ".claude/skills/f/SKILL.md is a FIFO",
        (p) => join(p.root, ".claude", "skills", "f", "SKILL.md"),
        fifo,
      ),
      start(
        "agent-dev-zero",
        ".claude/agents/z.md -> /dev/zero",
        (p) => join(p.root, ".claude", "agents", "z.md"),
        (path) => link("/dev/zero", path),
      ),
      start(
        "agent-fifo",
        ".forkloop/agents/q.md is a FIFO",
        (p) => join(p.root, ".forkloop", "agents", "q.md"),
        fifo,
      ),
      start(
        "skills-loop",
        ".claude/skills/loop -> . (a directory cycle)",
        (p) => join(p.root, ".claude", "skills"),
        (path) => link(".", join(path, "loop")),
      ),
      start(
        "skill-huge-sparse",
        ".forkloop/skills/h/SKILL.md is a 2 GB sparse file",
        (p) => join(p.root, ".forkloop", "skills", "h", "SKILL.md"),
        (path) => sparse(path, 2 * 1024 ** 3),
      ),
    ],
  },
  {
    name: "settings files",
    refusalExits: true,
    cases: [
      start(
        "settings-fifo",
        ".claude/settings.json is a FIFO",
        (p) => join(p.cwd, ".claude", "settings.json"),
        fifo,
      ),
      start(
        "settings-dev-zero",
        ".forkloop/settings.local.json -> /dev/zero",
        (p) => join(p.cwd, ".forkloop", "settings.local.json"),
        (path) => link("/dev/zero", path),
      ),
    ],
  },
  {
    name: ".mcp.json",
    trust: true,
    cases: [
      start("mcp-json-fifo", ".mcp.json is a FIFO (trusted project)", (p) => join(p.cwd, ".mcp.json"), fifo),
    ],
  },
];

/** The start cases of `set` planted into a fresh project; what closes its sockets. */
function plantStart(dir: string, set: StartSet): { project: Project; closers: (() => void)[] } {
  const project = newProject(dir);
  const closers: (() => void)[] = [];
  for (const entry of set.cases) entry.plant(project, closers);
  return { project, closers };
}

/**
 * The run must end by itself, and either start (the file skipped with a line) or — for a settings
 * file, whose refusal is the fail-fast rule — exit 2 naming the refused file.
 */
function startSurface(set: StartSet): Surface {
  return {
    label: `forkloop run: ${set.name} that are FIFOs, devices, sockets or huge neither hang nor kill the start`,
    async run(dir) {
      const { project, closers } = plantStart(dir, set);
      try {
        const seen = await runCliAgainst(
          ["run", "hi", "--output-format", "json", ...(set.trust ? ["--trust-project"] : [])],
          { cwd: project.cwd, home: project.home, scenario: TEXT_ONLY, watchdogMs: 150_000 },
        );
        const ran = seen.code === 0 && seen.requestCount > 0;
        const refused =
          set.refusalExits === true &&
          seen.code === 2 &&
          seen.requestCount === 0 &&
          set.cases.some((entry) => entry.path !== undefined && seen.stderr.includes(entry.path(project)));
        if (!seen.hung && (ran || refused)) return [];
        const effect = seen.hung
          ? "the run hung (ended by the watchdog)"
          : `the run did not start or end (exit ${seen.code}, ${seen.requestCount} requests): ${seen.stderr.slice(-300)}`;
        return set.cases.map((entry) => ({ id: entry.id, effect: `one of ${set.name}: ${effect}` }));
      } finally {
        for (const close of closers) close();
      }
    },
  };
}

/**
 * The control: each planted file read the plain way (a child reading it whole, as readFileSync
 * does, following links; a directory walked following links) fails or does not end in 3 s.
 */
function naiveReadFails(set: StartSet) {
  return async (dir: string): Promise<Through[]> => {
    const { project, closers } = plantStart(dir, set);
    try {
      const results = await Promise.all(
        set.cases.map(async (entry) => {
          const path = entry.path?.(project);
          if (path === undefined) return [];
          const failed = await naiveRead(path);
          return failed === undefined ? [] : [{ id: entry.id, effect: failed }];
        }),
      );
      return results.flat();
    } finally {
      for (const close of closers) close();
    }
  };
}

const NAIVE_READ = `
const fs = require("fs"), path = require("path");
const walk = (p) => fs.statSync(p).isDirectory() ? fs.readdirSync(p).forEach((n) => walk(path.join(p, n))) : fs.readFileSync(p);
walk(process.argv[1]);`;

/** Why reading `path` the plain way fails (threw, or still reading after 3 s), or undefined. */
function naiveRead(path: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["-e", NAIVE_READ, path], { stdio: "ignore" });
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      resolve("a plain read did not end in 3 s");
    }, 3_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve(code === 0 ? undefined : `a plain read failed (exit ${code})`);
    });
  });
}

/**
 * A trusted project's own settings and .mcp.json start programs; through a link they are files
 * from elsewhere (R-S8). The programs leave markers.
 */
const TRUSTED_LINK_CASES: readonly StartCase[] = [
  trustedLink(
    "settings-symlink-outside-hooks",
    ".forkloop/settings.json -> a file outside with a hook (trusted project)",
    (p) => {
      const file = join(p.outside, "settings.json");
      const hook = {
        hooks: [
          { type: "command", command: touchPayload(join(p.outside, "settings-symlink-outside-hooks.ran")) },
        ],
      };
      writeFileSync(file, JSON.stringify({ hooks: { UserPromptSubmit: [hook] } }));
      link(file, join(p.cwd, ".forkloop", "settings.json"));
    },
  ),
  trustedLink(
    "settings-hardlink-outside-hooks",
    ".claude/settings.local.json is a hard link to a file outside with a hook",
    (p) => {
      const file = join(p.outside, "settings-local.json");
      const hook = {
        hooks: [
          { type: "command", command: touchPayload(join(p.outside, "settings-hardlink-outside-hooks.ran")) },
        ],
      };
      writeFileSync(file, JSON.stringify({ hooks: { UserPromptSubmit: [hook] } }));
      hardLink(file, join(p.cwd, ".claude", "settings.local.json"));
    },
  ),
  trustedLink(
    "mcp-json-symlink-outside",
    ".mcp.json -> a file outside naming a server (trusted project)",
    (p) => {
      const file = join(p.outside, "mcp.json");
      const command = touchPayload(join(p.outside, "mcp-json-symlink-outside.ran"));
      writeFileSync(file, JSON.stringify({ mcpServers: { far: { command: "sh", args: ["-c", command] } } }));
      link(file, join(p.cwd, ".mcp.json"));
    },
  ),
  trustedLink(
    "settings-symlink-outside-model",
    ".claude/settings.json -> a file outside whose model is a secret (untrusted: model is kept)",
    (p) => {
      const file = join(p.outside, "model-settings.json");
      writeFileSync(file, JSON.stringify({ model: secretFor(p, "settings-symlink-outside-model") }));
      link(file, join(p.cwd, ".claude", "settings.json"));
    },
  ),
];

/** The files the trusted-link cases plant, relative to the project's cwd. */
const TRUSTED_LINK_PATHS = [
  ".forkloop/settings.json",
  ".claude/settings.local.json",
  ".mcp.json",
  ".claude/settings.json",
];

/** Runs the trusted-link cases; `inline` makes each link a plain copy of its target first (the control). */
async function runTrustedLinks(
  cases: readonly StartCase[],
  dir: string,
  inline: boolean,
): Promise<Through[]> {
  const project = newProject(dir);
  for (const entry of cases) entry.plant(project, []);
  if (inline)
    for (const path of TRUSTED_LINK_PATHS) {
      const file = join(project.cwd, path);
      if (!existsSync(file)) continue;
      const content = readFileSync(file);
      unlinkSync(file);
      writeFileSync(file, content);
    }
  const seen = await runCliAgainst(["run", "hi", "--output-format", "json", "--trust-project"], {
    cwd: project.cwd,
    home: project.home,
    scenario: TEXT_ONLY,
  });
  const through: Through[] = [];
  for (const entry of cases) {
    if (existsSync(join(project.outside, `${entry.id}.ran`)))
      through.push({ id: entry.id, effect: "the linked file's program ran" });
    const secret = project.secrets.get(entry.id);
    if (secret !== undefined && seen.requests.includes(secret))
      through.push({ id: entry.id, effect: "the linked file's content was sent to the model" });
  }
  return through;
}

export function leakGroup(title: string, cases: readonly LeakCase[]): CaseGroup {
  // Imports are a loader's feature, not a file's: plain cat cannot show them.
  const shown = cases.filter((entry) => !entry.id.startsWith("mem-import"));
  return {
    title,
    cases,
    surfaces: [
      queryLeakSurface(cases),
      cliLeakSurface(cases, "forkloop run --permission-mode default", () => [
        "run",
        "hi",
        "--output-format",
        "json",
        ...modeFlags("default"),
      ]),
      cliLeakSurface(
        cases,
        "the built forkloop binary, run --permission-mode plan (the credentials in its own environment)",
        () => ["run", "hi", "--output-format", "json", ...modeFlags("plan")],
        true,
      ),
      cliLeakSurface(cases, "forkloop batch (one item)", (dir) => batchArgs(join(dir, "items"), 1, [])),
    ],
    ...(shown.length === 0
      ? {}
      : {
          control: {
            label: "the same links read with plain cat show the secrets",
            expect: shown.map((entry) => entry.id),
            async run(dir: string) {
              const project = plantLeaks(dir, cases);
              // Every file below the root, read from the session's directory (as /proc/self/cwd is).
              const text = execFileSync(
                "sh",
                ["-c", 'cat $(find -L "$0" -type f -name "*.md") 2>/dev/null; true', project.root],
                {
                  cwd: project.cwd,
                  encoding: "utf8",
                  env: { ...process.env, ANTHROPIC_API_KEY: SECRETS.apiKey },
                },
              );
              return judgeLeaks(
                cases,
                project,
                { code: 0, stdout: "", stderr: "", hung: false, requestCount: 1, requests: text },
                [SECRETS.apiKey, STARTING_PATH],
              );
            },
          },
        }),
  };
}

export function startGroup(title: string, sets: readonly StartSet[]): CaseGroup {
  const cases = sets.flatMap((set) => set.cases);
  return {
    title,
    cases,
    surfaces: sets.map(startSurface),
    control: {
      label: "the same files read the plain way (whole, following links) fail or do not end",
      expect: cases.map((entry) => entry.id),
      run: async (dir) =>
        (await Promise.all(sets.map((set, index) => naiveReadFails(set)(join(dir, `${index}`))))).flat(),
    },
  };
}

export function trustedLinkGroup(title: string, cases: readonly StartCase[]): CaseGroup {
  return {
    title,
    cases,
    surfaces: [
      {
        label: "forkloop run --trust-project: settings and .mcp.json through links to files outside",
        run: (dir) => runTrustedLinks(cases, dir, false),
      },
    ],
    control: {
      label: "the same files as plain files in the project are used",
      expect: cases.map((entry) => entry.id),
      run: (dir) => runTrustedLinks(cases, dir, true),
    },
  };
}

export const groups: readonly CaseGroup[] = [
  leakGroup(
    "R-S8: memory files, imports, skills, agents and commands are read only from inside the workspace",
    LEAK_CASES,
  ),
  startGroup(
    "R-S8 / R-S13: FIFOs, devices, sockets and huge files met at session start neither hang nor kill it",
    START_SETS,
  ),
  trustedLinkGroup(
    "R-S8: settings and .mcp.json through links to files outside are not used",
    TRUSTED_LINK_CASES,
  ),
];
