import { execFileSync } from "node:child_process";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "@forkloop/cli/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTrustSession, type SessionSeen } from "./support/trust-session.js";

// R-S8: project content (memory files and their imports, skills, agent definitions, settings,
// `.mcp.json`) is read as Read reads a file. Each hostile shape runs a real query() session
// against the simulator; what the simulator recorded must not hold the secret, and stderr names
// the file once with the reason.

const SECRET = "SECRET-OUTSIDE-7f3a";

let sim: Simulator;
let root: string;
let counter = 0;

beforeAll(async () => {
  sim = await startSimulator();
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-project-files-")));
});
afterAll(async () => {
  await sim.close();
  rmSync(root, { recursive: true, force: true });
});

interface Case {
  readonly project: string;
  readonly home: string;
  /** A file outside the project and the home directory holding SECRET. */
  readonly secretFile: string;
  readonly outside: string;
}

function freshCase(): Case {
  const dir = join(root, `case-${counter++}`);
  const project = join(dir, "project");
  const home = join(dir, "home");
  const outside = join(dir, "outside");
  for (const path of [project, home, outside]) mkdirSync(path, { recursive: true });
  const secretFile = join(outside, "secret.md");
  writeFileSync(
    secretFile,
    `---\nname: leaked\ndescription: ${SECRET}\n---\n${SECRET}\n{"mcpServers": {}, "note": "${SECRET}"}\n`,
  );
  return { project, home, secretFile, outside };
}

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

async function session(c: Case, extra = {}): Promise<SessionSeen> {
  return runTrustSession(sim, {
    cwd: c.project,
    home: c.home,
    stateDir: join(c.project, "..", "state"),
    extra,
  });
}

function expectNothingSent(seen: SessionSeen, secret = SECRET): void {
  expect(seen.bodies.length).toBeGreaterThan(0);
  for (const body of seen.bodies) expect(body).not.toContain(secret);
}

/** Exactly one stderr line names `path`, with `reason`. */
function expectNamedOnce(seen: SessionSeen, path: string, reason: string): void {
  const lines = seen.stderr.filter((line) => line.includes(`${path}: `));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(reason);
  expect(lines[0]).toContain("To use it,");
}

function expectSucceeded(seen: SessionSeen): void {
  expect(seen.error).toBeUndefined();
  expect(seen.messages.at(-1)).toMatchObject({ type: "result", subtype: "success" });
}

describe("R-S8: memory files are read as Read reads a file", () => {
  it("R-S8 control: a regular CLAUDE.md holding the text does reach the system prompt", async () => {
    const c = freshCase();
    write(join(c.project, "CLAUDE.md"), `Rule: ${SECRET}`);
    const seen = await session(c);
    expectSucceeded(seen);
    expect(seen.systemPrompts[0]).toContain(SECRET);
  });

  it("R-S8: CLAUDE.md -> /proc/self/environ sends no environment", async () => {
    const c = freshCase();
    symlinkSync("/proc/self/environ", join(c.project, "CLAUDE.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen, `PATH=${process.env.PATH}`);
    for (const body of seen.bodies) expect(body).not.toMatch(/\\u0000|HOME=/);
    expectNamedOnce(seen, join(c.project, "CLAUDE.md"), "is outside");
  });

  it("R-S8: built CLI: a committed CLAUDE.md -> /proc/self/environ sends neither the API key nor the environment", async () => {
    const c = freshCase();
    symlinkSync("/proc/self/environ", join(c.project, "CLAUDE.md"));
    const key = "sk-ant-environ-leak-0042";
    sim.clearRequests();
    const result = await runCli(["run", "Say hi"], {
      cwd: c.project,
      env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: sim.url },
    });
    expect(result.code).toBe(0);
    const bodies = sim.requests().map((record) => record.rawBody);
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) {
      expect(body).not.toContain(key);
      expect(body).not.toContain("ANTHROPIC_BASE_URL=");
    }
    const lines = result.stderr
      .split("\n")
      .filter((line) => line.includes(`${join(c.project, "CLAUDE.md")}: `));
    expect(lines).toEqual([expect.stringContaining("/proc/")]);
  });

  it("R-S8: a symlink to a file outside the workspace is not read", async () => {
    const c = freshCase();
    symlinkSync(c.secretFile, join(c.project, "CLAUDE.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expectNamedOnce(seen, join(c.project, "CLAUDE.md"), `its real path ${c.secretFile} is outside`);
  });

  it("R-S8: a hard link to a file outside is not read", async () => {
    const c = freshCase();
    linkSync(c.secretFile, join(c.project, "AGENTS.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expectNamedOnce(seen, join(c.project, "AGENTS.md"), "has 2 hard links");
  });

  it("R-S8: a FIFO named CLAUDE.md does not hang session start", async () => {
    const c = freshCase();
    execFileSync("mkfifo", [join(c.project, "CLAUDE.md")]);
    const seen = await session(c);
    expectSucceeded(seen);
    expectNamedOnce(seen, join(c.project, "CLAUDE.md"), "it is a FIFO");
  });

  it("R-S13: a socket named AGENTS.md is skipped with one line", async () => {
    const c = freshCase();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(join(c.project, "AGENTS.md"), resolve));
    try {
      const seen = await session(c);
      expectSucceeded(seen);
      expectNamedOnce(seen, join(c.project, "AGENTS.md"), "it is a socket");
    } finally {
      server.close();
    }
  });

  it("R-S8: MEMORY.md -> /dev/zero does not exhaust session start", async () => {
    const c = freshCase();
    symlinkSync("/dev/zero", join(c.project, "MEMORY.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNamedOnce(seen, join(c.project, "MEMORY.md"), "it is a character device");
  });

  it("R-S8: a huge CLAUDE.md is refused, not cut", async () => {
    const c = freshCase();
    write(join(c.project, "CLAUDE.md"), `${SECRET}\n${"x".repeat(300 * 1024)}`);
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expectNamedOnce(seen, join(c.project, "CLAUDE.md"), "over the 262144-byte limit");
  });

  it("R-S8: a directory named CLAUDE.md is skipped with one line", async () => {
    const c = freshCase();
    mkdirSync(join(c.project, "CLAUDE.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNamedOnce(seen, join(c.project, "CLAUDE.md"), "it is a directory");
  });

  it("R-S8: an import that leaves the workspace is not read; the importing file is", async () => {
    const c = freshCase();
    write(join(c.project, "CLAUDE.md"), `Keep rules short.\n@../outside/secret.md\n@docs/linked.md\n`);
    mkdirSync(join(c.project, "docs"));
    symlinkSync(c.secretFile, join(c.project, "docs", "linked.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expect(seen.systemPrompts[0]).toContain("Keep rules short.");
    expectNamedOnce(seen, c.secretFile, "is outside");
    expectNamedOnce(seen, join(c.project, "docs", "linked.md"), "is outside");
  });

  it("R-S8: the user's own memory file may not leave their home either", async () => {
    const c = freshCase();
    mkdirSync(join(c.home, ".claude"));
    symlinkSync(c.secretFile, join(c.home, ".claude", "CLAUDE.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expectNamedOnce(seen, join(c.home, ".claude", "CLAUDE.md"), `is outside ${c.home}`);
  });
});

describe("R-S8: skills, agent definitions, settings and .mcp.json", () => {
  it("R-S8: a skill whose SKILL.md links outside is not offered", async () => {
    const c = freshCase();
    mkdirSync(join(c.project, ".claude", "skills", "leak"), { recursive: true });
    symlinkSync(c.secretFile, join(c.project, ".claude", "skills", "leak", "SKILL.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expectNamedOnce(seen, join(c.project, ".claude", "skills", "leak", "SKILL.md"), "is outside");
  });

  it("R-S8: an agent definition hard-linked to a file outside is not offered", async () => {
    const c = freshCase();
    mkdirSync(join(c.project, ".claude", "agents"), { recursive: true });
    linkSync(c.secretFile, join(c.project, ".claude", "agents", "leak.md"));
    const seen = await session(c);
    expectSucceeded(seen);
    expectNothingSent(seen);
    expectNamedOnce(seen, join(c.project, ".claude", "agents", "leak.md"), "hard links");
  });

  it("R-S8: a project settings file linked outside stops the run with the reason and the fix", async () => {
    const c = freshCase();
    mkdirSync(join(c.project, ".forkloop"));
    symlinkSync(c.secretFile, join(c.project, ".forkloop", "settings.json"));
    const seen = await session(c, { settingSources: ["project"] });
    expect(seen.error?.message).toContain(join(c.project, ".forkloop", "settings.json"));
    expect(seen.error?.message).toContain("is outside");
    expect(seen.error?.message).toContain("Fix:");
    expect(seen.bodies).toEqual([]);
  });

  it("R-S8: a trusted project's .mcp.json linked outside starts no server", async () => {
    const c = freshCase();
    const marker = join(c.outside, "server-started");
    write(
      join(c.outside, "servers.json"),
      JSON.stringify({ mcpServers: { leak: { command: "sh", args: ["-c", `touch '${marker}'`] } } }),
    );
    symlinkSync(join(c.outside, "servers.json"), join(c.project, ".mcp.json"));
    const seen = await session(c, { trustProject: true, settingSources: ["project"] });
    expectSucceeded(seen);
    expect(existsSync(marker)).toBe(false);
    expectNamedOnce(seen, join(c.project, ".mcp.json"), "is outside");
  });
});
