import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  callTool,
  isProcessAlive,
  livePidsWithArgument,
  resultText,
  useTempWorkspace,
  waitFor,
} from "../testing/index.js";
import { bashTool, createBashTool } from "./bash.js";

const ws = useTempWorkspace();

/** Starts two background sleeps and a grandchild sleep, writing their pids to `pids`. */
const SPAWN_SLEEPERS =
  "sleep 300 & echo $! > pids.tmp; sleep 300 & echo $! >> pids.tmp; " +
  "bash -c 'sleep 300 & echo $! >> pids.tmp; wait' & sleep 0.2; mv pids.tmp pids; wait";

/** Sleep durations no other process on the machine has: each names one escaped sleep in /proc. */
const usedTokens: string[] = [];
function uniqueTokens(): string[] {
  const tokens = Array.from(
    { length: 5 },
    (_, i) => `${9_000_000 + i * 100_000 + Math.floor(Math.random() * 99_999)}`,
  );
  usedTokens.push(...tokens);
  return tokens;
}
// A failing test still leaves no sleeper behind on the shared machine.
afterEach(() => {
  for (const pid of usedTokens.splice(0).flatMap(livePidsWithArgument)) process.kill(pid, "SIGKILL");
});

/** Background sleeps that leave the call's process group, each its own way. */
function escapingSleeps([a, b, c, d, e]: readonly string[]): string {
  return [
    `setsid sleep ${a} &`, // a new session
    `setsid sh -c 'sleep ${b}' &`, // a shell in a new session, and its child
    `( setsid sh -c 'sleep ${c} &' & );`, // a double fork: reparented away at once
    `env -i setsid sleep ${d} &`, // no environment: the descriptor mark finds it
    `setsid sleep ${e} 3>&- &`, // the descriptor closed: the environment mark finds it
  ].join(" ");
}

const anyAlive = (tokens: readonly string[]) =>
  tokens.some((token) => livePidsWithArgument(token).length > 0);

function readPids(): number[] {
  return readFileSync(join(ws.root, "pids"), "utf8").trim().split("\n").map(Number);
}

describe("Bash", () => {
  it("R-T3, R-X1: runs in the working directory and returns stdout then stderr; both apart as its structured output", async () => {
    const result = await callTool(bashTool, { command: "pwd; echo oops >&2" }, ws.context());
    expect(result.isError).toBe(false);
    expect(resultText(result)).toBe(`${ws.root}\noops`);
    expect(result.output).toEqual({
      stdout: ws.root,
      stderr: "oops",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
    });
  });

  it("R-T3: reports a non-zero exit code as an error", async () => {
    const result = await callTool(bashTool, { command: "echo partial; exit 3" }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toBe("partial\n\nExit code 3");
  });

  it("R-T3: caps output keeping head and tail with an omitted-characters marker", async () => {
    const tool = createBashTool({ maxOutputChars: 100 });
    const result = await callTool(tool, { command: "echo START; seq 1 5000; echo END" }, ws.context());
    const text = resultText(result);
    expect(text.startsWith("START\n1\n2\n")).toBe(true);
    expect(text.endsWith("4999\n5000\nEND")).toBe(true);
    expect(text).toMatch(/… \d+ characters omitted …/);
    expect(text.length).toBeLessThan(200);
  });

  it("R-T3: a timeout kills the whole process group, leaving no orphan", async () => {
    const result = await callTool(bashTool, { command: SPAWN_SLEEPERS, timeout: 1500 }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/timed out after 1500 ms; its whole process group was killed/);
    const pids = readPids();
    expect(pids).toHaveLength(3);
    expect(await waitFor(() => pids.every((pid) => !isProcessAlive(pid)))).toBe(true);
  });

  it("R-L16: an abort kills the whole process group, leaving no orphan", async () => {
    const context = ws.context();
    const running = callTool(bashTool, { command: SPAWN_SLEEPERS }, context);
    expect(await waitFor(() => existsSync(join(ws.root, "pids")))).toBe(true);
    const pids = readPids();
    expect(pids.every(isProcessAlive)).toBe(true);
    context.abortController.abort();
    const result = await running;
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/interrupted; its whole process group was killed/);
    expect(await waitFor(() => pids.every((pid) => !isProcessAlive(pid)))).toBe(true);
  });

  it("R-T3: background jobs end with the command instead of surviving as orphans", async () => {
    const result = await callTool(
      bashTool,
      { command: "sleep 300 & echo $! > pids; echo started" },
      ws.context(),
    );
    expect(resultText(result)).toBe("started");
    const pids = readPids();
    expect(await waitFor(() => pids.every((pid) => !isProcessAlive(pid)))).toBe(true);
  });

  it("processes that left the process group (setsid, a double fork, env -i) are ended before the call returns", async () => {
    const tokens = uniqueTokens();
    const result = await callTool(
      bashTool,
      { command: `${escapingSleeps(tokens)} sleep 0.5; echo started` },
      ws.context(),
    );
    expect(resultText(result)).toBe("started");
    expect(tokens.filter((token) => livePidsWithArgument(token).length > 0)).toEqual([]);
  });

  it("a timeout ends what left the process group too", async () => {
    const tokens = uniqueTokens();
    const result = await callTool(
      bashTool,
      { command: `${escapingSleeps(tokens)} sleep 30`, timeout: 1500 },
      ws.context(),
    );
    expect(resultText(result)).toMatch(/timed out after 1500 ms/);
    expect(tokens.filter((token) => livePidsWithArgument(token).length > 0)).toEqual([]);
  });

  it("an abort ends what left the process group too (alive until then)", async () => {
    const tokens = uniqueTokens();
    const context = ws.context();
    const running = callTool(bashTool, { command: `${escapingSleeps(tokens)} sleep 30` }, context);
    expect(
      await waitFor(() => tokens.every((token) => livePidsWithArgument(token).length > 0)),
      "every escaping sleep runs",
    ).toBe(true);
    context.abortController.abort();
    expect(resultText(await running)).toMatch(/interrupted/);
    expect(anyAlive(tokens)).toBe(false);
  });

  it("R-T1: timeout above the 600000 ms maximum is refused in the foreground; the schema's limit is the background's 7200000", async () => {
    const result = await callTool(bashTool, { command: "true", timeout: 600_001 }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/over the 600000 ms a foreground command may take/);
    const overAll = await callTool(bashTool, { command: "true", timeout: 7_200_001 }, ws.context());
    expect(resultText(overAll)).toMatch(/InputValidationError/);
  });

  it("R-T2: only known read-only commands are concurrency-safe and read-only", () => {
    expect(bashTool.isReadOnly({ command: "git status && ls -la | wc -l" })).toBe(true);
    expect(bashTool.isConcurrencySafe({ command: "grep -rn 'a$' src" })).toBe(true);
    expect(bashTool.isReadOnly({ command: "rm -rf build" })).toBe(false);
  });

  it("R-S4: Bash gets no model credentials, but what the user passed explicitly, and GIT_OPTIONAL_LOCKS=0", async () => {
    const tool = createBashTool({
      baseEnv: {
        PATH: process.env.PATH,
        ANTHROPIC_API_KEY: "sk-1",
        ANTHROPIC_AUTH_TOKEN: "t-1",
        FORKLOOP_API_KEY: "f-1",
        KEEP: "yes",
      },
      env: { EXPLICIT: "given" },
    });
    const result = await callTool(
      tool,
      {
        command:
          'echo "[$ANTHROPIC_API_KEY][$ANTHROPIC_AUTH_TOKEN][$FORKLOOP_API_KEY][$KEEP][$EXPLICIT][$GIT_OPTIONAL_LOCKS]"',
      },
      ws.context(),
    );
    expect(resultText(result)).toBe("[][][][yes][given][0]");
  });

  it("R-S2: git that Bash starts cannot be made to run the repository's fsmonitor, and command-scope config already given is kept", async () => {
    const git = (...args: string[]) =>
      execFileSync("git", args, { cwd: ws.root, env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" } });
    git("init", "-q");
    writeFileSync(join(ws.root, "f.txt"), "x\n");
    git("add", "f.txt");
    writeFileSync(join(ws.root, "f.txt"), "changed\n");
    git("config", "core.fsmonitor", "touch fsmonitor-ran; false");
    const tool = createBashTool({
      baseEnv: {
        PATH: process.env.PATH,
        GIT_CONFIG_GLOBAL: "/dev/null",
        GIT_CONFIG_COUNT: "1",
        GIT_CONFIG_KEY_0: "user.name",
        GIT_CONFIG_VALUE_0: "kept",
      },
    });
    const result = await callTool(
      tool,
      { command: "git status --short; git config user.name" },
      ws.context(),
    );
    expect(resultText(result)).toBe("AM f.txt\nkept");
    expect(existsSync(join(ws.root, "fsmonitor-ran"))).toBe(false);
    // The control: the same git status outside Bash does run it (the test can fail).
    git("status", "--short");
    expect(existsSync(join(ws.root, "fsmonitor-ran"))).toBe(true);
  });
});
