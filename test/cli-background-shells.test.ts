import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startCli } from "@forkloop/cli/testing";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import { livePidsWithArgument, waitFor } from "@forkloop/tools/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/**
 * Background shells through the built CLI on the simulator (R-T4): the scripted model reads the
 * task id and output file from Bash's result, as a model would, and acts on them.
 */
const used: string[] = [];
function token(): string {
  const value = `${6_000_000 + Math.floor(Math.random() * 999_999)}`;
  used.push(value);
  return value;
}
const alive = (value: string) => livePidsWithArgument(value).length > 0;

const call = (name: string, input: Record<string, unknown>): BrainReply => ({
  content: [{ type: "tool_use", name, input }],
  adaptiveThinking: false,
});
const say = (text: string): BrainReply => ({ content: [{ type: "text", text }], adaptiveThinking: false });

/** Every tool result the conversation holds, in order. */
function results(request: BrainRequest): string[] {
  return request.body.messages.flatMap((message) =>
    typeof message.content === "string"
      ? []
      : message.content.flatMap((block) =>
          block.type === "tool_result"
            ? [typeof block.content === "string" ? block.content : JSON.stringify(block.content)]
            : [],
        ),
  );
}
function started(request: BrainRequest): { id: string; file: string } {
  for (const text of results(request)) {
    const match = /background with ID: (\w+)\. Output is being written to: (\S+?)\. /.exec(text);
    if (match?.[1] && match[2]) return { id: match[1], file: match[2] };
  }
  throw new Error("no background start in the conversation");
}

let dir: string;
let sim: Awaited<ReturnType<typeof startSimulator>>;
const sleeper = token();
const lateSleeper = token();
/** What the brain saw of the sleeper's process just before it asked for TaskStop (the control). */
let aliveBeforeStop: boolean | undefined;
const notified: string[] = [];

function brain(request: BrainRequest): BrainReply {
  const prompt = request.body.messages.find((message) => message.role === "user");
  const first = typeof prompt?.content === "string" ? prompt.content : JSON.stringify(prompt?.content);
  const turn = request.turnIndex;
  if (first.includes("read twice")) {
    switch (turn) {
      case 0:
        return call("Bash", {
          command: `echo one; while [ ! -e go ]; do sleep 0.05; done; echo two; exec sleep ${sleeper}`,
          run_in_background: true,
          description: "slow server",
        });
      case 1:
        return call("Read", { file_path: started(request).file });
      case 2:
        return call("Bash", { command: "touch go; sleep 0.5", description: "keep working" });
      case 3:
        return call("Read", { file_path: started(request).file });
      case 4:
        aliveBeforeStop = alive(sleeper);
        return call("TaskStop", { task_id: started(request).id });
      default:
        return say("stopped it");
    }
  }
  if (first.includes("finish later")) {
    const last = request.lastUserText ?? "";
    if (last.includes("<task-notification>")) {
      notified.push(last);
      return say("the build finished");
    }
    if (turn === 0) {
      return call("Bash", {
        command: "sleep 1; echo built",
        run_in_background: true,
        description: "slow build",
      });
    }
    return say("started the build; I will hear when it ends");
  }
  if (first.includes("never ends")) {
    if (turn === 0) return call("Bash", { command: `exec sleep ${lateSleeper}`, run_in_background: true });
    return say("left it running");
  }
  return say("unexpected");
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-background-"));
  await writeFile(join(dir, "README.md"), "a project\n");
  sim = await startSimulator({ brain });
});
afterEach(() => {
  for (const pid of used.flatMap(livePidsWithArgument)) process.kill(pid, "SIGKILL");
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

const env = () => ({ ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url });
const flags = ["--output-format", "stream-json", "--allowed-tools", "Bash", "--sandbox", "off"];

function toolResults(stdout: string): string[] {
  return stdout
    .split("\n")
    .filter((line) => line.startsWith("{"))
    .map((line) => JSON.parse(line) as { type: string; message?: { content?: unknown } })
    .filter((line) => line.type === "user" && Array.isArray(line.message?.content))
    .flatMap((line) =>
      ((line.message?.content ?? []) as { type: string; content?: unknown }[])
        .filter((block) => block.type === "tool_result")
        .map((block) => (typeof block.content === "string" ? block.content : JSON.stringify(block.content))),
    );
}

describe("background shells through the built CLI (R-T4)", () => {
  it("R-T4: a background command is read twice while the agent works, then stopped: no process left in /proc", async () => {
    const run = await runCli(["run", "start a server, read twice, stop it", ...flags], {
      cwd: dir,
      env: env(),
    });
    expect(run.code, run.stderr).toBe(0);
    const [startedText, firstRead, , secondRead, stopped] = toolResults(run.stdout);
    expect(startedText).toMatch(
      /^Command running in background with ID: b\w+\. Output is being written to: /,
    );
    expect(firstRead).toBe("1\tone\n2\t");
    expect(secondRead).toBe("1\tone\n2\ttwo\n3\t");
    expect(JSON.parse(stopped ?? "{}")).toMatchObject({ task_type: "local_bash" });
    // Control: it ran until TaskStop, so the check below can fail.
    expect(aliveBeforeStop).toBe(true);
    expect(alive(sleeper)).toBe(false);
  });

  it("R-T4: a command that ends after the turn: run waits for it and the model gets Claude Code's task notification in a turn of its own", async () => {
    const run = await runCli(["run", "build it, finish later", ...flags], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(0);
    const resultLines = run.stdout.split("\n").filter((line) => line.includes('"type":"result"'));
    expect(resultLines).toHaveLength(2);
    expect(resultLines[1]).toContain("the build finished");
    expect(notified).toHaveLength(1);
    expect(notified[0]).toMatch(
      /<task-notification>\n<task-id>b\w+<\/task-id>\n<tool-use-id>toolu_\w+<\/tool-use-id>\n<output-file>\S+\.output<\/output-file>\n<status>completed<\/status>\n<summary>Background command "slow build" completed \(exit code 0\)<\/summary>\n<\/task-notification>/,
    );
  });

  // Through the whole CLI the process's exit sweep of marked processes would also end it; the
  // session's own close is proven in-process by packages/sdk/src/query-background-shells.test.ts.
  it("R-T4: the session's end stops what still runs (Ctrl+C while run waits for it)", async () => {
    const cli = startCli(["run", "start one that never ends", ...flags], { cwd: dir, env: env() });
    expect(await waitFor(() => alive(lateSleeper), 500), cli.stderr()).toBe(true);
    expect(await waitFor(() => cli.stdout().includes("left it running"), 500)).toBe(true);
    cli.child.kill("SIGINT");
    const result = await cli.exited;
    // The interrupt came between turns: the last turn's result stands (exit 0), nothing is lost.
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"subtype":"success"');
    expect(alive(lateSleeper)).toBe(false);
  });
});
