import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  runCli,
  type SimHandle,
  type StartedCli,
  startCli,
  startSimProcess,
  streamJsonLines,
  waitForOutput,
  writeScenario,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-S12: a signal always ends the run promptly — SIGTERM in the middle of a long Grep or Glob over
 * a large tree stops the process, and nothing is lost: the session holds the call and its
 * "Interrupted by user" result, and `run --resume` continues from it. The process is the subject,
 * so the built CLI is spawned. "Mid-search" is seen on the process itself: its read counter
 * (/proc/PID/io rchar) has grown by part of what the search reads, so the search has started
 * and has most of its work still ahead. The assertion is never a duration: a process whose main
 * thread the search blocks answers the signal only after the search, with the search's result
 * in the session — or, for a search that never ends in practice, not within the test's time.
 */
const DIRECTORIES = 3_000;
/** Each directory's file: lines of text Grep reads in full (96 MB in all). */
const FILE_BYTES = 32 * 1024;
/** Each directory's .gitignore (comments only): the walk reads one per directory, so Glob's progress shows too. */
const GITIGNORE_BYTES = 1024;
/** Slow but linear on RE2: a big program over every byte, no literal to skip by (R-S12's cost, not a hang). */
const SLOW_PATTERN = "(?i)(?:\\w|\\s){500,999}\\x{00}";

let dir: string;
let sim: SimHandle;
const started: StartedCli[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-signal-search-"));
  const line = `${"lorem ipsum dolor sit amet consectetur adipiscing ".repeat(2)}\n`;
  const text = line.repeat(Math.ceil(FILE_BYTES / line.length)).slice(0, FILE_BYTES);
  const ignoreText = `${"# nothing here is ignored\n".repeat(Math.ceil(GITIGNORE_BYTES / 26))}`.slice(
    0,
    GITIGNORE_BYTES,
  );
  for (let index = 0; index < DIRECTORIES; index++) {
    const sub = join(dir, "tree", `d${String(index).padStart(4, "0")}`);
    await mkdir(sub, { recursive: true });
    await writeFile(join(sub, "notes.txt"), text);
    await writeFile(join(sub, ".gitignore"), ignoreText);
  }
  await mkdir(join(dir, "slow"));
  for (let index = 0; index < 3; index++)
    await writeFile(join(dir, "slow", `big${index}.txt`), text.repeat(32));
  const toolCall = (name: string, input: Record<string, unknown>) => ({
    content: [{ type: "tool_use", name, input }],
  });
  const scenario = await writeScenario(
    join(dir, "scenario.json"),
    [
      {
        match: { turn: 0, lastUserText: "grep the tree" },
        reply: toolCall("Grep", { pattern: "(?i)needle_\\w+_absent", path: "tree" }),
      },
      {
        match: { turn: 0, lastUserText: "glob the tree" },
        reply: toolCall("Glob", { pattern: "**/*.txt", path: "tree" }),
      },
      {
        match: { turn: 0, lastUserText: "grep slowly" },
        reply: toolCall("Grep", { pattern: SLOW_PATTERN, path: "slow" }),
      },
    ],
    "done (scripted by the simulator)",
  );
  sim = await startSimProcess(dir, ["--scenario", scenario]);
}, 300_000);

afterAll(async () => {
  for (const cli of started) if (cli.child.exitCode === null) cli.child.kill("SIGKILL");
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** Bytes the process has read so far (every thread, the thread pool's too). */
function bytesRead(pid: number): number {
  const match = /^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, "utf8"));
  return Number(match?.[1] ?? 0);
}

/** Starts `run <prompt>`, waits for the model's tool call, then until the process has read `bytes` more. */
async function midSearch(prompt: string, bytes: number): Promise<StartedCli> {
  const run = startCli(["run", prompt, "--output-format", "stream-json"], { cwd: dir, env: sim.env });
  started.push(run);
  await waitForOutput(run.child, run.stdout, (text) => text.includes('"tool_use"'));
  const pid = run.child.pid as number;
  const before = bytesRead(pid);
  while (bytesRead(pid) - before < bytes) {
    if (run.child.exitCode !== null) throw new Error(`the run ended before its search did:\n${run.stderr()}`);
    await sleep(5);
  }
  return run;
}

/** SIGTERM now; then: exit 143, the call answered as stopped while running, and a resume that sees both. */
async function stopsAndResumes(run: StartedCli): Promise<void> {
  run.child.kill("SIGTERM");
  const stopped = await run.exited;
  expect(stopped.code, stopped.stderr).toBe(143);
  expect(stopped.stderr).toContain("forkloop: SIGTERM received, stopping");
  const lines = streamJsonLines(stopped.stdout);
  const call = lines
    .flatMap((line) => (line.type === "assistant" ? line.message.content : []))
    .find((block) => block.type === "tool_use");
  const toolUseId = String(call?.id);
  expect(toolUseId).toMatch(/^toolu_/);
  // The call's answer is the interruption, not the search's result: the process did not wait for it.
  expect(stopped.stdout).toMatch(
    new RegExp(`"tool_use_id":"${toolUseId}"[^\\n]*stopped while running[^\\n]*User rejected tool use`),
  );
  const sessionId = lines.at(-1)?.session_id ?? "";
  const before = (await sim.requests()).length;
  const resumed = await runCli(["run", "--resume", sessionId, "what happened?"], { cwd: dir, env: sim.env });
  expect(resumed.code, resumed.stderr).toBe(0);
  const [request] = (await sim.requests()).slice(before);
  // Nothing lost: the resumed conversation carries the call and its interrupted result.
  expect(request?.rawBody).toContain(toolUseId);
  expect(request?.rawBody).toContain("this call was stopped while running");
}

describe("R-S12: a signal always ends the run promptly (built CLI)", () => {
  it("SIGTERM while Grep reads a 3,000-directory, 96 MB tree", async () => {
    await stopsAndResumes(await midSearch("grep the tree", 8 * 1024 * 1024));
  }, 180_000);

  it("SIGTERM while Glob walks the same tree", async () => {
    await stopsAndResumes(await midSearch("glob the tree", (DIRECTORIES * GITIGNORE_BYTES) / 10));
  }, 180_000);

  it("SIGTERM while Grep matches a linear but slow pattern over a 1 MB file", async () => {
    await stopsAndResumes(await midSearch("grep slowly", FILE_BYTES * 32));
  }, 180_000);
});
