import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAgentState } from "@forkloop/loop-core";
import { afterEach, describe, expect, it } from "vitest";
import {
  callTool,
  createOutsideDir,
  livePidsWithArgument,
  resultText,
  useTempWorkspace,
  waitFor,
  weakenedSandbox,
} from "../testing/index.js";
import { createBashTool, runBashCommand } from "../tools/bash.js";
import { readTool } from "../tools/read.js";
import { taskStopTool } from "../tools/task-stop.js";
import {
  BackgroundShells,
  type BackgroundTaskEvent,
  backgroundShellsFor,
  existingBackgroundShells,
  runningShellsNote,
  taskNotificationText,
} from "./background-shells.js";

const ws = useTempWorkspace();
const bash = createBashTool();

/** Sleep durations no other process has: each names one process in /proc. */
const usedTokens: string[] = [];
function token(): string {
  const value = `${7_000_000 + Math.floor(Math.random() * 999_999)}`;
  usedTokens.push(value);
  return value;
}
const alive = (value: string) => livePidsWithArgument(value).length > 0;
const opened: BackgroundShells[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((shells) => shells.close()));
  for (const pid of usedTokens.splice(0).flatMap(livePidsWithArgument)) process.kill(pid, "SIGKILL");
});

/** A context whose agent's shells are closed after the test. */
function context() {
  const agentState = createAgentState();
  opened.push(backgroundShellsFor(agentState));
  return ws.context({ agentState });
}

function startedId(text: string): { id: string; file: string } {
  const match = /background with ID: (\w+)\. Output is being written to: (\S+)\. /.exec(text);
  if (!match?.[1] || !match[2]) throw new Error(`not a background start: ${text}`);
  return { id: match[1], file: match[2] };
}

describe("background shells", () => {
  it("R-T4: run_in_background returns at once with an id; Read shows the output as it grows; the end is a notice", async () => {
    const ctx = context();
    const events: BackgroundTaskEvent[] = [];
    backgroundShellsFor(ctx.agentState).onTask((event) => events.push(event));
    const started = await callTool(
      bash,
      {
        command: "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; exit 3",
        run_in_background: true,
        description: "two steps",
      },
      ctx,
    );
    const { id, file } = startedId(resultText(started));
    // Said outright, with Bash's structured output naming the task, as Claude Code's (R-K2, R-X1).
    expect(started.isError).toBe(false);
    expect(started.output).toEqual({
      stdout: "",
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
      backgroundTaskId: id,
    });
    expect(resultText(started)).toBe(
      `Command running in background with ID: ${id}. Output is being written to: ${file}. ` +
        "You will be notified when it completes. To check interim output, use Read on that file path.",
    );
    const shells = existingBackgroundShells(ctx.agentState);
    expect(shells?.get(id)?.status).toBe("running");
    expect(await waitFor(() => readFileSync(file, "utf8").includes("first"))).toBe(true);
    const firstRead = resultText(await callTool(readTool, { file_path: file }, ctx));
    expect(firstRead).toBe("1\tfirst\n2\t");
    writeFileSync(join(ws.root, "go"), "");
    await shells?.nextEvent();
    const notices = shells?.takeNotices() ?? [];
    expect(notices).toEqual([
      {
        taskId: id,
        toolUseId: "toolu_test",
        outputFile: file,
        status: "failed",
        summary: 'Background command "two steps" failed with exit code 3',
      },
    ]);
    const secondRead = resultText(await callTool(readTool, { file_path: file }, ctx));
    expect(secondRead).toContain("2\tsecond");
    expect(secondRead).toContain("[exited with code 3]");
    const text = taskNotificationText(notices[0] as NonNullable<(typeof notices)[0]>);
    expect(text).toContain(
      `<task-notification>\n<task-id>${id}</task-id>\n<tool-use-id>toolu_test</tool-use-id>`,
    );
    expect(text).toContain("<status>failed</status>");
    // R-K2: the start (before the call's answer) and the end, for a host's task messages.
    expect(events.map((event) => [event.type, event.task.id, event.task.status])).toEqual([
      ["started", id, "running"],
      ["ended", id, "failed"],
    ]);
    expect(events[1]).toMatchObject({ summary: notices[0]?.summary, notified: true });
  });

  it("R-T4: TaskStop ends the whole process tree, escaped processes too, before it returns; no notice follows", async () => {
    const ctx = context();
    const [inGroup, setsid, doubleFork] = [token(), token(), token()];
    const command = [
      `sleep ${inGroup} &`,
      `setsid sleep ${setsid} &`,
      `( setsid sh -c 'sleep ${doubleFork} &' & );`,
      "echo up; wait",
    ].join(" ");
    const events: BackgroundTaskEvent[] = [];
    backgroundShellsFor(ctx.agentState).onTask((event) => events.push(event));
    const { id, file } = startedId(
      resultText(await callTool(bash, { command, run_in_background: true }, ctx)),
    );
    // Control: while it runs, every one of them is alive (the check below can fail).
    expect(await waitFor(() => [inGroup, setsid, doubleFork].every(alive))).toBe(true);
    const stopped = await callTool(taskStopTool, { task_id: id }, ctx);
    // The call's structured output is the same object (R-K2).
    expect(stopped.output).toEqual(JSON.parse(resultText(stopped)));
    expect(JSON.parse(resultText(stopped))).toEqual({
      message: `Successfully stopped task: ${id} (${command})`,
      task_id: id,
      task_type: "local_bash",
      command,
    });
    expect([inGroup, setsid, doubleFork].filter(alive)).toEqual([]);
    expect(readFileSync(file, "utf8")).toContain("[stopped: its whole process tree was killed]");
    const shells = existingBackgroundShells(ctx.agentState);
    expect(shells?.get(id)?.status).toBe("stopped");
    expect(shells?.takeNotices()).toEqual([]);
    // Its end is still an event (a host's task ends), one the agent is not told of.
    expect(events.at(-1)).toMatchObject({
      type: "ended",
      summary: command,
      notified: false,
    });
  });

  it("R-T4: the shell's deprecated shell_id is accepted; an id that does not exist is a tool error", async () => {
    const ctx = context();
    const { id } = startedId(
      resultText(await callTool(bash, { command: `sleep ${token()}`, run_in_background: true }, ctx)),
    );
    const unknown = await callTool(taskStopTool, { task_id: "bnope" }, ctx);
    expect(unknown).toEqual({ content: "No task found with ID: bnope", isError: true });
    const byShellId = await callTool(taskStopTool, { shell_id: id }, ctx);
    expect(byShellId.isError).toBeUndefined();
    const again = await callTool(taskStopTool, { task_id: id }, ctx);
    expect(again).toEqual({ content: `Task ${id} is not running (status: stopped)`, isError: true });
    // Another agent cannot stop it: its shells are not this one's.
    const other = await callTool(taskStopTool, { task_id: id }, context());
    expect(other.isError).toBe(true);
  });

  it("R-T4: output is capped in the file, the end still said; control: the command printed far more", async () => {
    const shells = new BackgroundShells({ maxOutputBytes: 64 * 1024 });
    opened.push(shells);
    const agentState = createAgentState();
    const bytes = 20 * 1024 * 1024;
    const started = shells.start({
      command: "flood",
      toolUseId: "toolu_flood",
      timeoutMs: 60_000,
      run: async (limits) => {
        const outcome = await runBashCommand(
          `head -c ${bytes} /dev/zero | tr '\\0' a; echo; echo done`,
          {},
          ws.context({ agentState }),
          { ...limits, maxOutputChars: 30_000 },
        );
        if ("error" in outcome) throw new Error(outcome.error);
        return outcome.run;
      },
    });
    if (typeof started === "string") throw new Error(started);
    await shells.nextEvent();
    const size = statSync(started.outputFile).size;
    expect(size).toBeLessThan(64 * 1024 + 500);
    const text = readFileSync(started.outputFile, "utf8");
    // Control: what was dropped is counted, and it is the flood minus what was kept.
    expect(shells.get(started.id)?.droppedBytes).toBe(bytes + "\ndone\n".length - 64 * 1024);
    expect(text).toContain(`bytes of output not kept: the file keeps the first ${64 * 1024}]`);
    expect(text.trimEnd().endsWith("[exited with code 0]")).toBe(true);
  });

  it("R-T4: one agent's running shells are capped; the refusal lists them", async () => {
    const shells = new BackgroundShells({ maxRunning: 2 });
    opened.push(shells);
    const forever = (limits: { signal: AbortSignal }) =>
      new Promise<{ exitCode: null; signal: null; timedOut: false; aborted: true }>((resolve) =>
        limits.signal.addEventListener("abort", () =>
          resolve({ exitCode: null, signal: null, timedOut: false, aborted: true }),
        ),
      );
    const spec = { command: "x", toolUseId: "t", timeoutMs: 60_000, run: forever };
    const a = shells.start(spec);
    const b = shells.start(spec);
    const c = shells.start(spec);
    expect(typeof a).toBe("object");
    expect(typeof b).toBe("object");
    expect(c).toMatch(
      /^2 background commands are already running, the most one agent may have \(b\w+, b\w+\)/,
    );
  });

  it("R-T4: a background timeout stops the tree and says so in the notice", async () => {
    const ctx = context();
    const sleeper = token();
    const { id } = startedId(
      resultText(
        await callTool(bash, { command: `sleep ${sleeper}`, run_in_background: true, timeout: 800 }, ctx),
      ),
    );
    const shells = existingBackgroundShells(ctx.agentState);
    await shells?.nextEvent();
    expect(shells?.takeNotices().map((notice) => [notice.taskId, notice.status, notice.summary])).toEqual([
      [id, "failed", `Background command "sleep ${sleeper}" timed out after 800 ms and was stopped`],
    ]);
    expect(alive(sleeper)).toBe(false);
  });

  it("R-T4: closing (the owner ended) stops every shell and removes the files; later starts are refused", async () => {
    const ctx = context();
    const sleeper = token();
    const { file } = startedId(
      resultText(await callTool(bash, { command: `sleep ${sleeper}`, run_in_background: true }, ctx)),
    );
    expect(await waitFor(() => alive(sleeper))).toBe(true);
    const shells = existingBackgroundShells(ctx.agentState);
    expect(runningShellsNote(shells)).toContain(`sleep ${sleeper}`);
    const stillRunning = await shells?.close();
    expect(stillRunning?.map((shell) => shell.command)).toEqual([`sleep ${sleeper}`]);
    expect(alive(sleeper)).toBe(false);
    expect(existsSync(file)).toBe(false);
    expect(runningShellsNote(shells)).toBe("");
    const refused = await callTool(bash, { command: "true", run_in_background: true }, ctx);
    expect(refused).toEqual({
      content: "This agent has ended; no background command can start.",
      isError: true,
    });
  });

  it("R-T4: Read reads this agent's output files only; control: another agent's file is outside the workspace", async () => {
    const mine = context();
    const theirs = context();
    const { file } = startedId(
      resultText(await callTool(bash, { command: "echo secret", run_in_background: true }, theirs)),
    );
    await existingBackgroundShells(theirs.agentState)?.nextEvent();
    expect(resultText(await callTool(readTool, { file_path: file }, theirs))).toContain("secret");
    const refused = await callTool(readTool, { file_path: file }, mine);
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toMatch(/outside/);
  });

  it("R-T4: a foreground timeout over 600000 ms is refused (only a background command may run that long)", async () => {
    const result = await callTool(bash, { command: "true", timeout: 900_000 }, context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/set run_in_background/);
  });
});

describe("messages to a sub-agent task that is being stopped", () => {
  /** A sub-agent task whose run takes a moment to end after its stop (its last request winds down). */
  function stoppingAgent(shells: BackgroundShells, id: string, steered: string[]) {
    return shells.start({
      kind: "local_agent",
      id,
      command: "review",
      toolUseId: `toolu_${id}`,
      timeoutMs: 0,
      send: (message) => steered.push(message),
      run: ({ signal }) =>
        new Promise((resolve) =>
          signal.addEventListener("abort", () =>
            setTimeout(() => resolve({ exitCode: null, signal: null, timedOut: false, aborted: true }), 50),
          ),
        ),
    });
  }

  it("R-T5: a message sent while TaskStop stops a resumable sub-agent resumes it once the run has ended, never steered into the ending run; control: one not being stopped is steered", async () => {
    const shells = new BackgroundShells();
    opened.push(shells);
    const steered: string[] = [];
    const resumed: string[] = [];
    stoppingAgent(shells, "agent-stopping", steered);
    shells.resumable("agent-stopping", (message) => {
      resumed.push(message);
      return "not started in this test";
    });
    // Control: while it runs, the message is steered into the run.
    expect(shells.send("agent-stopping", "first")).toEqual({ resumed: false });
    expect(steered).toEqual(["first"]);
    const stopping = shells.stop("agent-stopping");
    expect(shells.send("agent-stopping", "second")).toEqual({ resumed: true });
    expect(steered).toEqual(["first"]);
    // Not before the stopped run has ended: the resume starts a new run under the same id.
    expect(resumed).toEqual([]);
    await stopping;
    await waitFor(() => resumed.length > 0);
    expect(resumed).toEqual(["second"]);
  });

  it("R-T5: a message to a sub-agent being stopped that cannot be resumed is a refusal saying it was not delivered", async () => {
    const shells = new BackgroundShells();
    opened.push(shells);
    const steered: string[] = [];
    stoppingAgent(shells, "agent-final", steered);
    const stopping = shells.stop("agent-final");
    expect(shells.send("agent-final", "late")).toMatch(/being stopped, and your message was not delivered/);
    expect(steered).toEqual([]);
    await stopping;
  });
});

describe("background shells in the sandbox", () => {
  it("R-T4: a background command is sandboxed as a foreground one; control: the weakened sandbox lets it write", async () => {
    const outside = createOutsideDir("forkloop-bg-outside-");
    try {
      const write = `echo x > ${outside.root}/escaped; echo tried`;
      const run = async (tool: ReturnType<typeof createBashTool>) => {
        const ctx = context();
        await callTool(tool, { command: write, run_in_background: true }, ctx);
        await existingBackgroundShells(ctx.agentState)?.nextEvent();
      };
      await run(createBashTool({ sandbox: { enabled: true } }));
      expect(existsSync(join(outside.root, "escaped"))).toBe(false);
      await run(createBashTool({ sandbox: { enabled: true }, sandboxArgs: weakenedSandbox.rootWritable }));
      expect(existsSync(join(outside.root, "escaped"))).toBe(true);
    } finally {
      outside.cleanup();
    }
  });
});
