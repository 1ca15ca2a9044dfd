import type { BrainReply, BrainRequest, RequestRecord } from "@forkloop/sim";
import { livePidsWithArgument, waitFor } from "@forkloop/tools/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

const REPORT = "REVIEW-REPORT-42";
/** A sleep duration no other process has: it names the stalled sub-agent's command in /proc. */
const sleeper = `${6_000_000 + Math.floor(Math.random() * 999_999)}`;
/**
 * How long the reviewing sub-agent waits for the parent's next request before answering anyway:
 * only a deadlock breaker for the foreground control (whose parent cannot move until it answers).
 */
const GATE_FALLBACK_MS = 2_000;

/** Per test: who let the reviewing sub-agent answer — the parent working on, or the fallback. */
let gate: { release: (by: "parent" | "fallback") => void; releasedBy: Promise<"parent" | "fallback"> };
let launched: { agentId: string; outputFile: string } | undefined;
let readOutput = false;
let background = true;
/** Whether the stalled sub-agent's command was running when the parent stopped it. */
let stalledRan = false;

function newGate(): typeof gate {
  let release: (by: "parent" | "fallback") => void = () => {};
  const releasedBy = new Promise<"parent" | "fallback">((resolve) => {
    release = resolve;
  });
  return { release, releasedBy };
}

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });
const call = (name: string, input: Record<string, unknown>): BrainReply => ({
  content: [{ type: "tool_use", name, input }],
});

async function subAgent(request: BrainRequest): Promise<BrainReply> {
  if ((request.lastUserText ?? "").includes("Stall")) {
    return request.lastToolResults.length > 0 ? text("slept") : call("Bash", { command: `sleep ${sleeper}` });
  }
  // It reads a file first: its Agent output then holds a note of the tools used before its text.
  if (request.lastToolResults.length === 0) return call("Read", { file_path: "notes.md" });
  setTimeout(() => gate.release("fallback"), GATE_FALLBACK_MS).unref();
  await gate.releasedBy;
  return text(REPORT);
}

async function parent(request: BrainRequest): Promise<BrainReply> {
  const results = request.lastToolResults.map((result) => result.content).join("\n");
  const userText = request.lastUserText ?? "";
  const stall = JSON.stringify(request.body.messages[0]).includes("stall");
  const launch = /agentId: (\S+)[^\n]*\n[\s\S]*output_file: (\S+)/.exec(results);
  if (launch?.[1] !== undefined && launch[2] !== undefined) {
    launched = { agentId: launch[1], outputFile: launch[2] };
    if (stall) {
      // Stop it once its command runs, so the stop has a process tree to end.
      stalledRan = await waitFor(() => livePidsWithArgument(sleeper).length > 0, 500);
      return call("TaskStop", { task_id: launched.agentId });
    }
    // The parent keeps working while the sub-agent runs: this request lets it answer.
    gate.release("parent");
    return call("Read", { file_path: "notes.md" });
  }
  if (userText.includes("<task-notification>") && launched !== undefined && !readOutput) {
    readOutput = true;
    return call("Read", { file_path: launched.outputFile });
  }
  if (results.includes("Successfully stopped task")) return text("stopped it");
  if (results.includes(REPORT) && readOutput) return text("report read");
  if (results.includes(REPORT)) return text("got the report in the call's result");
  if (results.includes("Release notes")) return text("parent kept working");
  if (request.turnIndex > 0) return text("nothing more");
  return call("Agent", {
    description: stall ? "stall" : "review notes",
    prompt: stall ? "Stall for a long time." : "Review notes.md.",
    subagent_type: "fork",
    ...(background ? { run_in_background: true } : {}),
  });
}

function brain(request: BrainRequest): Promise<BrainReply> | undefined {
  if (request.querySource?.startsWith("agent:")) return subAgent(request);
  if (request.querySource === "sdk") return parent(request);
  return undefined;
}

/**
 * Where the sub-agent's Read call is yielded: its assistant message and its task_progress
 * (the Agent SDK announces a foreground sub-agent's call before the reply holding it, a
 * background one's after it).
 */
function readCallOrder(messages: readonly SDKMessage[]): { reply: number; progress: number } {
  const reply = messages.findIndex(
    (message) =>
      message.type === "assistant" &&
      message.parent_tool_use_id !== null &&
      message.message.content.some((block) => block.type === "tool_use" && block.name === "Read"),
  );
  const progress = messages.findIndex(
    (message) =>
      message.type === "system" && message.subtype === "task_progress" && message.last_tool_name === "Read",
  );
  return { reply, progress };
}

describe("R-T5: background sub-agents (Agent run_in_background) over worker threads and the simulator", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  beforeEach(() => {
    gate = newGate();
    launched = undefined;
    readOutput = false;
    harness.sim.clearRequests();
  });
  afterAll(async () => {
    for (const pid of livePidsWithArgument(sleeper)) process.kill(pid, "SIGKILL");
    await harness.close();
  });

  const requests = (source: string): RequestRecord[] =>
    harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === source);

  it("R-T5: the call returns at once, the parent works on while the sub-agent runs, its end is a notification, its report is in its output file, and it reads the parent's prefix from the cache", async () => {
    background = true;
    const messages = await collectMessages(
      query({
        prompt: "review the notes",
        options: harness.options({ allowedTools: ["Agent", "Read"] }),
      }),
    );
    // The sub-agent answered only because the parent's next request came while it ran.
    expect(await gate.releasedBy).toBe("parent");
    const notification = messages.find(
      (message) => message.type === "system" && message.subtype === "task_notification",
    );
    expect(notification).toMatchObject({ status: "completed" });
    // R-K2: the background sub-agent's Read call: its reply first, then its task_progress.
    const order = readCallOrder(messages);
    expect(order.reply).toBeGreaterThanOrEqual(0);
    expect(order.progress).toBeGreaterThan(order.reply);
    expect(messages.filter((message) => message.type === "result").at(-1)).toMatchObject({
      subtype: "success",
      result: "report read",
    });
    const main = requests("sdk");
    // The notice the parent got carries the report, as Claude Code's does: the sub-agent's own
    // final text, passed through from its run — not the hand-back frame of a foreground call.
    const noticed = main.find(
      (record) =>
        record.rawBody.includes("&lt;task-notification") || record.rawBody.includes("<task-notification>"),
    );
    expect(noticed?.rawBody).toContain(`<result>${REPORT}`);
    expect(noticed?.rawBody).toContain(`<result>${REPORT}</result>`);
    // The output file Read returned holds the report.
    expect(main.at(-1)?.rawBody).toContain(REPORT);
    expect(main.at(-1)?.rawBody).toContain("the sub-agent completed");

    // R-F3: the background fork starts from the parent's exact prefix and reads it from the cache.
    const [first] = main;
    const [fork] = requests("agent:fork");
    if (first === undefined || fork === undefined) throw new Error("expected a parent and a fork request");
    // The fork's directive joins the parent's last user message (forkPrefixDifferences counts that
    // as a change of message 0): what must match is the system, the tools and that message's blocks.
    const parentBody = JSON.parse(first.rawBody) as {
      system: unknown;
      tools: unknown;
      messages: { content: unknown[] }[];
    };
    const forkBody = JSON.parse(fork.rawBody) as typeof parentBody;
    expect(forkBody.system).toEqual(parentBody.system);
    expect(forkBody.tools).toEqual(parentBody.tools);
    expect(forkBody.messages[0]?.content.slice(0, parentBody.messages[0]?.content.length)).toEqual(
      parentBody.messages[0]?.content,
    );
    const parentCached =
      (first.usage?.cache_creation_input_tokens ?? 0) + (first.usage?.cache_read_input_tokens ?? 0);
    expect(parentCached).toBeGreaterThan(0);
    expect(fork.usage?.cache_read_input_tokens).toBe(parentCached);
  });

  it("R-T5: TaskStop stops a background sub-agent by its id (its command's process tree with it), and no notification follows", async () => {
    background = true;
    const messages: SDKMessage[] = await collectMessages(
      query({
        prompt: "stall in the background",
        options: harness.options({ allowedTools: ["Agent", "Bash", "Read"] }),
      }),
    );
    expect(launched?.agentId).toMatch(/^agent-/);
    expect(stalledRan).toBe(true);
    expect(livePidsWithArgument(sleeper)).toEqual([]);
    const main = requests("sdk");
    expect(main.some((record) => record.rawBody.includes('\\"task_type\\":\\"local_agent\\"'))).toBe(true);
    expect(main.some((record) => record.rawBody.includes("<task-notification>"))).toBe(false);
    expect(messages.filter((message) => message.type === "result")).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ type: "result", result: "stopped it" });
  });

  it("R-T5 control: without run_in_background the Agent call blocks the turn until the sub-agent reports", async () => {
    background = false;
    const messages = await collectMessages(
      query({ prompt: "review the notes", options: harness.options({ allowedTools: ["Agent", "Read"] }) }),
    );
    // The parent could not move on: the sub-agent answered on the fallback, its report the call's result.
    expect(await gate.releasedBy).toBe("fallback");
    // R-K2: a foreground sub-agent's call is announced before the reply holding it.
    const order = readCallOrder(messages);
    expect(order.progress).toBeGreaterThanOrEqual(0);
    expect(order.reply).toBeGreaterThan(order.progress);
    expect(messages.at(-1)).toMatchObject({ type: "result", result: "got the report in the call's result" });
  });
});
