import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import type { CaseGroup, CorpusCase, Through } from "./corpus.js";
import { batchArgs, runCliAgainst, runQueryAgainst, scenarioFor, TEXT_ONLY } from "./drive.js";
import { freshDir, initRepo, leakedSecrets, SECRETS, touchPayload } from "./places.js";

/**
 * R-S13: MCP servers get the credential-free environment Bash gets (unless their
 * config names a variable), and so do hooks; state files are created 0600 and state directories
 * 0700 (transcripts hold file contents). Each server and hook writes its environment to a marker;
 * the modes are read from what the runs left under a umask of 022.
 */

const CREDENTIALS = {
  ANTHROPIC_API_KEY: SECRETS.apiKey,
  ANTHROPIC_AUTH_TOKEN: SECRETS.authToken,
  CLAUDE_CODE_OAUTH_TOKEN: SECRETS.oauthToken,
  FORKLOOP_API_KEY: SECRETS.forkloopKey,
};

const ENV_CASES: readonly CorpusCase[] = [
  { id: "env-mcp-flag-config", area: "trust-git-files", what: "a stdio server from --mcp-config" },
  {
    id: "env-mcp-user-claude-json",
    area: "trust-git-files",
    what: "a stdio server from ~/.claude.json mcpServers (user scope)",
  },
  {
    id: "env-mcp-local-claude-json",
    area: "trust-git-files",
    what: "a stdio server from ~/.claude.json projects[cwd] (local scope)",
  },
  {
    id: "env-mcp-user-settings",
    area: "trust-git-files",
    what: "a stdio server from ~/.claude/settings.json mcpServers",
  },
  {
    id: "env-mcp-trusted-mcp-json",
    area: "trust-git-files",
    what: "a stdio server from a trusted project's .mcp.json",
  },
  { id: "env-mcp-batch", area: "trust-git-files", what: "a stdio server of forkloop batch --mcp-config" },
  {
    id: "env-mcp-query-option",
    area: "trust-git-files",
    what: "a stdio server from query()'s mcpServers option",
  },
  {
    id: "env-hook-user-settings",
    area: "trust-git-files",
    what: "a SessionStart/UserPromptSubmit hook of the user's settings",
  },
];

/** A stdio server that writes its environment to `marker`; `named` adds the credentials by name. */
const server = (marker: string, named: boolean) => ({
  command: "sh",
  args: ["-c", touchPayload(marker)],
  ...(named
    ? { env: Object.fromEntries(Object.keys(CREDENTIALS).map((name) => [name, `\${${name}}`])) }
    : {}),
});

function judgeEnv(markers: string, ids: readonly string[]): Through[] {
  const through: Through[] = [];
  for (const id of ids) {
    const path = join(markers, id);
    if (!existsSync(path)) continue;
    const leaked = leakedSecrets(readFileSync(path, "utf8"), CREDENTIALS);
    if (leaked.length > 0) through.push({ id, effect: `its process got ${leaked.join(", ")}` });
  }
  return through;
}

/** Every process that should have started did (else a clean environment proves nothing). */
function started(markers: string, ids: readonly string[]): Through[] {
  return ids
    .filter((id) => !existsSync(join(markers, id)))
    .map((id) => ({ id: "harness", effect: `${id}: its process never started` }));
}

/** The user's MCP servers (every scope) and hook, a trusted project's .mcp.json; markers below `markers`. */
function plantServers(root: string, home: string, markers: string, named: boolean): void {
  const marker = (id: string) => join(markers, id);
  writeFileSync(
    join(home, ".claude.json"),
    JSON.stringify({
      mcpServers: { user: server(marker("env-mcp-user-claude-json"), named) },
      projects: { [root]: { mcpServers: { local: server(marker("env-mcp-local-claude-json"), named) } } },
    }),
  );
  mkdirSync(join(home, ".claude"), { recursive: true });
  const hook = { hooks: [{ type: "command", command: touchPayload(marker("env-hook-user-settings")) }] };
  writeFileSync(
    join(home, ".claude", "settings.json"),
    JSON.stringify({
      mcpServers: { insettings: server(marker("env-mcp-user-settings"), named) },
      hooks: { UserPromptSubmit: [hook] },
    }),
  );
  writeFileSync(
    join(root, ".mcp.json"),
    JSON.stringify({ mcpServers: { project: server(marker("env-mcp-trusted-mcp-json"), named) } }),
  );
}

/**
 * One user's day under umask 022: `forkloop run` on a trusted project (a sub-agent, MCP servers
 * from every scope and --mcp-config, a hook), a batch with --mcp-config, `forkloop trust`, and
 * query() with an mcpServers option; `named` gives every server's config the credentials by name
 * (the control). Judged on the servers' environments and on the modes of what was left in home.
 */
async function aDay(dir: string, named: boolean): Promise<{ markers: string; home: string }> {
  const previous = process.umask(0o022);
  try {
    const root = initRepo(join(freshDir(dir), "project"));
    const home = freshDir(dir, "home");
    const markers = freshDir(dir, "markers");
    const marker = (id: string) => join(markers, id);
    plantServers(root, home, markers, named);
    const flag = JSON.stringify({ mcpServers: { flag: server(marker("env-mcp-flag-config"), named) } });
    await runCliAgainst(
      ["run", "Delegate.", "--output-format", "json", "--trust-project", "--mcp-config", flag],
      {
        cwd: root,
        home,
        scenario: scenarioFor("sub", [{ id: "toolu_read", name: "Read", input: { file_path: "a.txt" } }]),
      },
    );
    const batchFlag = JSON.stringify({ mcpServers: { batch: server(marker("env-mcp-batch"), named) } });
    await runCliAgainst(
      batchArgs(join(dir, "items"), 1, ["--mcp-config", batchFlag, "--strict-mcp-config"]),
      {
        cwd: root,
        home,
        scenario: TEXT_ONLY,
      },
    );
    await runCliAgainst(["trust", root], { cwd: root, home, scenario: TEXT_ONLY });
    await runQueryAgainst(
      {
        stateDir: join(home, "query-state"),
        mcpServers: { option: { type: "stdio", ...server(marker("env-mcp-query-option"), named) } },
      },
      { cwd: root, home, scenario: TEXT_ONLY },
    );
    return { markers, home };
  } finally {
    process.umask(previous);
  }
}

/** What each state path is, for the modes: directories 0700, files 0600. */
interface ModeKind {
  readonly id: string;
  readonly what: string;
  readonly matches: (path: string, isDir: boolean) => boolean;
}

const MODE_KINDS: readonly ModeKind[] = [
  { id: "mode-forkloop-home-dir", what: "~/.forkloop", matches: (p, d) => d && p === ".forkloop" },
  {
    id: "mode-project-state-dir",
    what: "~/.forkloop/projects/<project>",
    matches: (p, d) => d && /^\.forkloop\/projects\/[^/]+$/.test(p),
  },
  { id: "mode-sessions-dir", what: "…/sessions/", matches: (p, d) => d && p.endsWith("/sessions") },
  {
    id: "mode-session-transcript",
    what: "a session transcript (.fltr, holds file contents)",
    matches: (p, d) => !d && /\/sessions\/[^/]+\.fltr$/.test(p),
  },
  {
    id: "mode-subagent-transcript",
    what: "a sub-agent's transcript",
    matches: (p, d) => !d && /\/sessions\/.+\/.+\.fltr$/.test(p),
  },
  { id: "mode-batch-dir", what: "a batch's directory", matches: (p, d) => d && /\/batches\/[^/]+$/.test(p) },
  { id: "mode-batch-spec", what: "batch.json", matches: (p, d) => !d && p.endsWith("/batch.json") },
  {
    id: "mode-batch-journal",
    what: "the batch journal",
    matches: (p, d) => !d && /\/batches\/[^/]+\/journal/.test(p),
  },
  { id: "mode-batch-results", what: "results.jsonl", matches: (p, d) => !d && p.endsWith("results.jsonl") },
  {
    id: "mode-batch-report",
    what: "report.json and report.md",
    matches: (p, d) => !d && /report\.(json|md)$/.test(p),
  },
  {
    id: "mode-batch-item-transcript",
    what: "a batch item's transcript",
    matches: (p, d) => !d && /\/batches\/.+\.fltr$/.test(p),
  },
  {
    id: "mode-trust-list",
    what: "~/.forkloop/trusted-projects.json",
    matches: (p, d) => !d && p.endsWith("trusted-projects.json"),
  },
  {
    id: "mode-query-transcript",
    what: "a query() session's transcript",
    matches: (p, d) => !d && p.startsWith("query-state/") && p.endsWith(".fltr"),
  },
];

const MODE_CASES: readonly (CorpusCase & ModeKind)[] = MODE_KINDS.map((entry) => ({
  ...entry,
  area: "trust-git-files",
}));

function judgeModes(home: string): Through[] {
  const through = new Map<string, string>();
  const seen = new Set<string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isSymbolicLink()) continue;
      const rel = relative(home, path);
      const isDir = entry.isDirectory();
      const mode = statSync(path).mode & 0o777;
      for (const kind of MODE_CASES) {
        if (!kind.matches(rel, isDir)) continue;
        seen.add(kind.id);
        if ((mode & 0o077) !== 0 && !through.has(kind.id))
          through.set(kind.id, `${rel} is ${mode.toString(8)}`);
      }
      if (isDir) walk(path);
    }
  };
  walk(home);
  const missing = MODE_CASES.filter((kind) => !seen.has(kind.id)).map((kind) => ({
    id: "harness",
    effect: `no ${kind.what} was made`,
  }));
  return [...missing, ...[...through].map(([id, effect]) => ({ id, effect: `world-readable: ${effect}` }))];
}

const ENV_IDS = ENV_CASES.map((entry) => entry.id);
/** Hooks have no way to be given the credentials by name: the control's servers only. */
const NAMED_IDS = ENV_IDS.filter((id) => id !== "env-hook-user-settings");

/** The control for the modes: the same state tree made by plain mkdir and writeFile under umask 022. */
function plainTree(home: string, into: string): void {
  const walk = (from: string, to: string) => {
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) {
        mkdirSync(join(to, entry.name));
        walk(join(from, entry.name), join(to, entry.name));
      } else writeFileSync(join(to, entry.name), "");
    }
  };
  const previous = process.umask(0o022);
  try {
    walk(home, into);
  } finally {
    process.umask(previous);
  }
}

export const groups: readonly CaseGroup[] = [
  {
    title: "R-S13: MCP servers and hooks get no model credentials; state files are 0600, directories 0700",
    cases: [...ENV_CASES, ...MODE_CASES],
    surfaces: [
      {
        label:
          "forkloop run (trusted, a sub-agent), batch, trust and query() under umask 022: servers of every scope, a user hook, the state left",
        async run(dir) {
          const { markers, home } = await aDay(dir, false);
          return [...started(markers, ENV_IDS), ...judgeEnv(markers, ENV_IDS), ...judgeModes(home)];
        },
      },
    ],
    control: {
      label:
        "servers whose config names the credentials get them; the same state tree made with plain writeFile is world-readable",
      expect: [...NAMED_IDS, ...MODE_CASES.map((entry) => entry.id)],
      async run(dir) {
        const { markers, home } = await aDay(dir, true);
        const plain = freshDir(dir, "plain");
        plainTree(home, plain);
        return [...judgeEnv(markers, NAMED_IDS), ...judgeModes(plain)];
      },
    },
  },
];
