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
import { runCli } from "@forkloop/cli/testing";
import { assembleSession } from "@forkloop/orchestrator";
import { query } from "@forkloop/sdk";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  clearMark,
  createTestRepo,
  GIT_EXECUTION_POINTS,
  marked,
  type TestRepo,
} from "./support/git-execution-points.js";

// R-S7: forkloop's own git (the session prefetch) starts no program a repository names. One real
// repository per execution point git has; the control — plain git doing what triggers the point —
// must run the planted program, so each test fails if the point is not really planted.

let root: string;
let home: string;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-git-points-")));
  home = join(root, "home");
  mkdirSync(home);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("R-S7: forkloop's own git runs no repository code", () => {
  GIT_EXECUTION_POINTS.forEach((point, index) => {
    it(`R-S7: session start does not run ${point.name}; plain git does`, async () => {
      const repo = createTestRepo(join(root, `point-${index}`));
      point.plant(repo);
      const session = await assembleSession({
        cwd: point.sessionCwd?.(repo) ?? repo.dir,
        model: "claude-sonnet-4-6",
        permissionMode: "default",
        tools: [],
        home,
      });
      expect(marked(repo)).toBe(false);
      // The git state still reaches the system prompt.
      expect(session.gitStatus).not.toBeNull();
      expect(session.systemPrompt[1]?.text).toContain("Current branch: ");
      clearMark(repo);
      point.control(repo);
      expect(marked(repo)).toBe(true);
    });
  });
});

describe("R-S7: every mode's session start (built CLI and query())", () => {
  let sim: Simulator;
  let repo: TestRepo;
  let shimLog: string;
  let shimPath: string;

  beforeAll(async () => {
    sim = await startSimulator();
    // One repository with the points git status and git log reach, all at once.
    repo = createTestRepo(join(root, "every-mode"));
    for (const name of [
      "core.fsmonitor",
      "hook post-index-change (.git/hooks)",
      "gpg.program (log.showSignature)",
    ]) {
      GIT_EXECUTION_POINTS.find((point) => point.name === name)?.plant(repo);
    }
    shimLog = join(root, "git-environments.log");
    const bin = join(root, "bin");
    mkdirSync(bin);
    writeFileSync(join(bin, "git"), `#!/bin/sh\n{ env; echo; } >> '${shimLog}'\nexec /usr/bin/git "$@"\n`);
    chmodSync(join(bin, "git"), 0o755);
    shimPath = `${bin}:${process.env.PATH ?? ""}`;
  });
  afterAll(() => sim.close());

  /** Every git process forkloop started ran without the key; at least one ran. */
  function expectGitWithoutKey(key: string): void {
    const log = readFileSync(shimLog, "utf8");
    expect(log).toContain("GIT_CONFIG_NOSYSTEM=1");
    expect(log).not.toContain(key);
    rmSync(shimLog);
  }

  function systemPrompts(): string[] {
    return sim
      .requests()
      .filter((record) => record.path === "/v1/messages")
      .map((record) => JSON.stringify((JSON.parse(record.rawBody) as { system?: unknown }).system));
  }

  it("R-S7: `forkloop run --permission-mode plan` (built CLI): nothing runs, the key stays out of git", async () => {
    sim.clearRequests();
    const key = "sk-ant-cli-secret-0001";
    const result = await runCli(["run", "Say hi", "--permission-mode", "plan"], {
      cwd: repo.dir,
      env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: sim.url, PATH: shimPath },
    });
    expect(result.code).toBe(0);
    expect(marked(repo)).toBe(false);
    expectGitWithoutKey(key);
    expect(systemPrompts()[0]).toContain("Current branch: main");
  });

  it("R-S7: `forkloop batch --dry-run` (built CLI): nothing runs", async () => {
    const key = "sk-ant-cli-secret-0002";
    const result = await runCli(["batch", "--files", "a.txt", "--prompt", "Review {{file}}", "--dry-run"], {
      cwd: repo.dir,
      env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: sim.url, PATH: shimPath },
    });
    expect(result.code).toBe(0);
    expect(marked(repo)).toBe(false);
    expectGitWithoutKey(key);
  });

  it("R-S7: query(): nothing runs, the key stays out of git; git is the one its env's PATH finds (as Claude Code's own git)", async () => {
    sim.clearRequests();
    const key = "sk-ant-query-secret-0003";
    const saved = { ANTHROPIC_API_KEY: process.env.ANTHROPIC_API_KEY };
    process.env.ANTHROPIC_API_KEY = key;
    try {
      for await (const message of query({
        prompt: "Say hi",
        options: {
          cwd: repo.dir,
          stateDir: join(repo.root, "state"),
          env: { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: sim.url, HOME: home, PATH: shimPath },
          stderr: () => {},
        },
      })) {
        if (message.type === "result") expect(message.subtype).toBe("success");
      }
    } finally {
      if (saved.ANTHROPIC_API_KEY === undefined) delete process.env.ANTHROPIC_API_KEY;
      else process.env.ANTHROPIC_API_KEY = saved.ANTHROPIC_API_KEY;
    }
    expect(marked(repo)).toBe(false);
    expectGitWithoutKey(key);
    expect(systemPrompts()[0]).toContain("Current branch: main");
    // The control: plain git status in this repository runs what was planted.
    repo.git(["status"]);
    expect(marked(repo)).toBe(true);
    clearMark(repo);
  });
});
