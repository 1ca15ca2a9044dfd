import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { streamJsonLineSchema } from "./stream-json.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-T4, R-K2, R-X1: a Bash call with run_in_background is a task in the message stream, as Claude
// Code 2.1.332 prints it (the claude-cli harness's bash-background scenario): the task list and
// task_started before the call's answer, Bash's structured output naming the task as its
// tool_use_result, and at its end task_updated, task_notification and the emptied list.

/** Ends only once the parent's next request made the file: after its call was answered. */
const GATED = "while [ ! -e go ]; do sleep 0.05; done; echo hello";
/** Outlives the test unless stopped. */
const ENDLESS = "sleep 300";

let dir = "";

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });

function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource !== "sdk") return undefined;
  if ((request.lastUserText ?? "").includes("<task-notification>")) return text("The greeting finished.");
  if (request.turnIndex > 0) {
    writeFileSync(join(dir, "go"), "");
    return text("It runs in the background.");
  }
  const endless = JSON.stringify(request.body.messages[0]?.content ?? "").includes("endless");
  return {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: {
          command: endless ? ENDLESS : GATED,
          description: endless ? "Wait forever" : "Print a greeting",
          run_in_background: true,
        },
      },
    ],
  };
}

const system = (messages: readonly SDKMessage[], subtype: string) =>
  messages.filter((message) => message.type === "system" && message.subtype === subtype);

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
  dir = harness.dir;
});
afterAll(async () => harness?.close());

describe("R-T4, R-K2: a background Bash command's task messages", () => {
  it("R-T4, R-K2, R-X1: task list and task_started before the call's answer, Bash's structured output with backgroundTaskId, then task_updated, task_notification and the emptied list", async () => {
    const messages = await collectMessages(
      query({
        prompt: "Run the slow greeting in the background.",
        options: harness.options({ allowedTools: ["Bash"] }),
      }),
    );
    for (const message of messages) expect(streamJsonLineSchema.safeParse(message).error).toBeUndefined();

    const callAt = messages.findIndex(
      (message) =>
        message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use"),
    );
    const call = messages[callAt];
    const toolUseId =
      call?.type === "assistant"
        ? call.message.content.find((block) => block.type === "tool_use")?.id
        : undefined;
    const answerAt = messages.findIndex(
      (message) => message.type === "user" && message.tool_use_result !== undefined,
    );
    const answer = messages[answerAt];
    if (answer?.type !== "user") throw new Error("no answer to the Bash call");
    const taskId = (answer.tool_use_result as { backgroundTaskId?: string }).backgroundTaskId ?? "";
    expect(answer.tool_use_result).toEqual({
      stdout: "",
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
      backgroundTaskId: taskId,
    });
    const [block] = answer.message.content as { type: string; content: string; is_error?: boolean }[];
    expect(block?.is_error).toBe(false);
    expect(block?.content).toContain(`Command running in background with ID: ${taskId}.`);
    const outputFile = /written to: (\S+\.output)\./.exec(block?.content ?? "")?.[1];

    const lists = system(messages, "background_tasks_changed");
    expect(lists).toMatchObject([
      { tasks: [{ task_id: taskId, task_type: "local_bash", description: "Print a greeting" }] },
      { tasks: [] },
    ]);
    const [started] = system(messages, "task_started");
    expect(started).toMatchObject({
      task_id: taskId,
      tool_use_id: toolUseId,
      description: "Print a greeting",
      is_backgrounded: true,
      task_type: "local_bash",
    });
    const runId = (started as { run_id?: string }).run_id;
    expect(runId).toBeTypeOf("string");
    const [updated] = system(messages, "task_updated");
    expect(updated).toMatchObject({ task_id: taskId, run_id: runId, patch: { status: "completed" } });
    expect((updated as { patch: { end_time?: number } }).patch.end_time).toBeTypeOf("number");
    const [notified] = system(messages, "task_notification");
    expect(notified).toEqual({
      type: "system",
      subtype: "task_notification",
      task_id: taskId,
      run_id: runId,
      tool_use_id: toolUseId,
      status: "completed",
      output_file: outputFile,
      summary: 'Background command "Print a greeting" completed (exit code 0)',
      session_id: answer.session_id,
      uuid: expect.any(String),
      // forkloop's stamp on every message query() yields.
      written_at: expect.any(String),
    });

    // In Claude Code's order: the call, the list, task_started, the answer; at the end the record,
    // the notification, the emptied list, and then the turn the notification starts.
    const at = (message: SDKMessage | undefined) => messages.indexOf(message as SDKMessage);
    expect(callAt).toBeLessThan(at(lists[0]));
    expect(at(lists[0])).toBeLessThan(at(started));
    expect(at(started)).toBeLessThan(answerAt);
    expect(at(updated)).toBeLessThan(at(notified));
    expect(at(notified)).toBeLessThan(at(lists[1]));
    const results = messages.filter((message) => message.type === "result");
    expect(
      results.map((result) => result.type === "result" && result.subtype === "success" && result.result),
    ).toEqual(["It runs in the background.", "The greeting finished."]);
    expect(at(lists[1])).toBeLessThan(at(results[1]));
  });

  it("R-T4, R-K2: a command stopTask() stops ends its task as killed and stopped; the model is not told", async () => {
    const run = query({
      prompt: "Run the endless one.",
      options: harness.options({ allowedTools: ["Bash"] }),
    });
    const messages: SDKMessage[] = [];
    for await (const message of run) {
      messages.push(message);
      // Stopped by the id the call's answer gives, as soon as it is answered.
      const id =
        message.type === "user" ? /with ID: (\w+)\./.exec(JSON.stringify(message.message))?.[1] : undefined;
      if (id !== undefined) await run.stopTask(id);
    }
    const [started] = system(messages, "task_started");
    const taskId = started?.type === "system" && "task_id" in started ? started.task_id : "";
    expect(taskId).toMatch(/^b\w+$/);
    expect(system(messages, "task_updated")).toMatchObject([
      { task_id: taskId, patch: { status: "killed" } },
    ]);
    expect(system(messages, "task_notification")).toMatchObject([
      { task_id: taskId, status: "stopped", summary: "Wait forever" },
    ]);
    expect(system(messages, "background_tasks_changed").at(-1)).toMatchObject({ tasks: [] });
    // Stopped quietly: no notification turn.
    expect(messages.filter((message) => message.type === "result")).toHaveLength(1);
  });
});
