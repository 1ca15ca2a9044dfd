import { describe, expect, it } from "vitest";
import type { CacheSafeParams } from "./cache-safe-params.js";
import { createUserMessage } from "./create-message.js";
import type { QueuedCommand } from "./loop-state.js";
import { query } from "./query.js";
import { simParams, useSimulator } from "./test-support/sim-harness.js";
import { collect, scriptedCallModel, testContext, testTool } from "./testing/index.js";

const sims = useSimulator();
const toolThenText = (request: { turnIndex: number }) =>
  request.turnIndex === 0
    ? { content: [{ type: "tool_use" as const, name: "Probe", input: {} }] }
    : { content: [{ type: "text" as const, text: "done" }] };

describe("R-L1/R-L2: generator lifecycle", () => {
  it("R-L1: nothing runs before the first next()", async () => {
    const callModel = scriptedCallModel([{ content: [{ type: "text", text: "hi" }] }]);
    let uuids = 0;
    const generator = query({
      messages: [createUserMessage("hi")],
      systemPrompt: "test",
      toolUseContext: testContext(),
      querySource: "sdk",
      deps: { callModel, uuid: () => `u${++uuids}` },
    });
    await Promise.resolve();
    expect(uuids).toBe(0);
    expect(callModel.requests).toHaveLength(0);
    const { terminal } = await collect(generator);
    expect(terminal.reason).toBe("completed");
    expect(callModel.requests).toHaveLength(1);
  });

  it("R-L2: queued commands are started inside the loop and completed after a normal return", async () => {
    const handle = await sims.start(toolThenText);
    const statuses: string[] = [];
    const queue: QueuedCommand[] = [];
    const probe = testTool({
      name: "Probe",
      call: async () => {
        // Arrives while the tool runs, like a user typing during a turn.
        queue.push({
          uuid: crypto.randomUUID(),
          content: "also check the tests",
          kind: "prompt",
          onStatus: (status) => statuses.push(status),
        });
        return { content: "ok" };
      },
    });
    const generator = query(simParams(handle, { tools: [probe], queuedCommands: queue }));
    let terminal: Awaited<ReturnType<typeof generator.next>> | undefined;
    for (let next = await generator.next(); ; next = await generator.next()) {
      if (next.done) {
        terminal = next;
        break;
      }
      // "completed" must not appear while the loop is still running.
      if (next.value.type === "request_start" && statuses.length > 0) expect(statuses).toEqual(["started"]);
    }
    expect(terminal?.value.reason).toBe("completed");
    expect(statuses).toEqual(["started", "completed"]);
    expect(handle.messageRequests()[1]?.rawBody).toContain("also check the tests");
  });

  it("R-L2: closing the generator early never marks commands completed", async () => {
    const handle = await sims.start(toolThenText);
    const statuses: string[] = [];
    const queue: QueuedCommand[] = [
      {
        uuid: crypto.randomUUID(),
        content: "queued",
        kind: "task_notification",
        onStatus: (s) => statuses.push(s),
      },
    ];
    const generator = query(
      simParams(handle, { tools: [testTool({ name: "Probe" })], queuedCommands: queue }),
    );
    for (let next = await generator.next(); !next.done; next = await generator.next()) {
      if (statuses.includes("started")) break;
    }
    await generator.return(undefined as never);
    expect(statuses).toEqual(["started"]);
  });
});

describe("R-L3: API task budget", () => {
  it("R-L3: total is sent with a remaining figure recomputed every iteration", async () => {
    const handle = await sims.start(toolThenText);
    await collect(
      query(simParams(handle, { tools: [testTool({ name: "Probe" })], taskBudget: { total: 50_000 } })),
    );
    const budgets = handle
      .messageRequests()
      .map(
        (record) =>
          JSON.parse(record.rawBody).output_config?.task_budget as { total: number; remaining: number },
      );
    expect(budgets.map((budget) => budget.total)).toEqual([50_000, 50_000]);
    expect(budgets[0]?.remaining).toBeLessThan(50_000);
    expect(budgets[1]?.remaining).toBeLessThan(budgets[0]?.remaining ?? 0);
  });
});

describe("R-L5/R-L13: state and config", () => {
  it("R-L5: snapshots record the transition of every iteration", async () => {
    const handle = await sims.start(toolThenText);
    const { events } = await collect(
      query(simParams(handle, { tools: [testTool({ name: "Probe" })], recordSnapshots: true })),
    );
    const snapshots = events.filter((event) => event.type === "state_snapshot");
    expect(snapshots.map((snapshot) => [snapshot.turnCount, snapshot.transition])).toEqual([
      [1, undefined],
      [2, "next_turn"],
    ]);
    expect(snapshots[1]?.messageCount).toBe(3);
  });

  it("R-L13: the config is captured once; later changes to params do not leak in", async () => {
    const handle = await sims.start(toolThenText);
    const params = { ...simParams(handle, { tools: [testTool({ name: "Probe" })] }), maxTurns: 5 } as {
      maxTurns: number;
    } & Parameters<typeof query>[0];
    const generator = query(params);
    await generator.next();
    params.maxTurns = 1;
    const { terminal } = await collect(generator);
    expect(terminal.reason).toBe("completed");
  });
});

const thinkingRun = () => ({
  model: "claude-opus-4-6",
  thinking: { type: "enabled", budget_tokens: 2_000 } as const,
  tools: [testTool({ name: "Probe" })],
});

describe("R-L17/R-L18/R-F3", () => {
  it("R-L17: thinking blocks go back unmodified through a tool trajectory (the simulator checks signatures)", async () => {
    const handle = await sims.start((request) =>
      request.turnIndex < 2
        ? {
            content: [
              { type: "thinking", thinking: `step ${request.turnIndex}` },
              { type: "tool_use", name: "Probe", input: {} },
            ],
          }
        : { content: [{ type: "text", text: "done" }] },
    );
    const { terminal } = await collect(query(simParams(handle, thinkingRun())));
    expect(terminal.reason).toBe("completed");
    expect(handle.messageRequests().every((record) => record.error === null)).toBe(true);
    expect(handle.messageRequests()[2]?.rawBody).toContain("step 1");
  });

  it("R-L17: thinking blocks are dropped from a request without thinking", async () => {
    const handle = await sims.start(toolThenText);
    const { terminal } = await collect(query(simParams(handle, thinkingRun())));
    const before = handle.messageRequests().length;
    await collect(
      query({
        ...simParams(handle, { model: "claude-opus-4-6", tools: thinkingRun().tools }),
        messages: [...terminal.messages, createUserMessage("next")],
      }),
    );
    const record = handle.messageRequests()[before];
    expect(record?.error).toBeNull();
    expect(record?.rawBody).not.toContain('"thinking"');
  });

  it("R-L18: a background tool-use summary from a small model, yielded in the next iteration", async () => {
    const handle = await sims.start((request) =>
      request.querySource === "tool_use_summary"
        ? { content: [{ type: "text", text: "Probed the workspace" }] }
        : toolThenText(request),
    );
    const { events, terminal } = await collect(
      query(
        simParams(handle, { tools: [testTool({ name: "Probe" })], toolUseSummaryModel: "claude-haiku-4-5" }),
      ),
    );
    expect(terminal.reason).toBe("completed");
    const summary = events.find((event) => event.type === "tool_use_summary");
    expect(summary).toMatchObject({ summary: "Probed the workspace" });
    const summaryRequest = handle
      .messageRequests()
      .find((record) => record.querySource === "tool_use_summary");
    expect(summaryRequest?.model).toBe("claude-haiku-4-5");
    // Yielded after the next request started, i.e. it ran in the background.
    const order = events.flatMap((event) =>
      event.type === "request_start" || event.type === "tool_use_summary" ? [event.type] : [],
    );
    expect(order).toEqual(["request_start", "request_start", "tool_use_summary"]);
  });

  it("R-L18: what the summary request cost is in Terminal.usage, and labelled", async () => {
    const handle = await sims.start((request) =>
      request.querySource === "tool_use_summary"
        ? { content: [{ type: "text", text: "Probed the workspace" }] }
        : toolThenText(request),
    );
    const { terminal } = await collect(
      query(
        simParams(handle, { tools: [testTool({ name: "Probe" })], toolUseSummaryModel: "claude-haiku-4-5" }),
      ),
    );
    const records = handle.messageRequests();
    const summaryRecord = records.find((record) => record.querySource === "tool_use_summary");
    expect(records).toHaveLength(3);
    expect(terminal.usage.apiCalls).toBe(3);
    const billed = (field: "input_tokens" | "output_tokens") =>
      records.reduce((sum, record) => sum + (record.usage?.[field] ?? 0), 0);
    expect(terminal.usage.inputTokens).toBe(billed("input_tokens"));
    expect(terminal.usage.outputTokens).toBe(billed("output_tokens"));
    expect(terminal.toolUseSummaryUsage).toMatchObject({
      apiCalls: 1,
      inputTokens: summaryRecord?.usage?.input_tokens,
      outputTokens: summaryRecord?.usage?.output_tokens,
    });
  });

  it("R-F3: each request_start carries its request's prefix byte for byte, with the messages it sends", async () => {
    const handle = await sims.start(toolThenText);
    const { events } = await collect(query(simParams(handle, { tools: [testTool({ name: "Probe" })] })));
    const announced: CacheSafeParams[] = events.flatMap((event) =>
      event.type === "request_start" ? [event.prefix] : [],
    );
    expect(announced).toHaveLength(2);
    announced.forEach((prefix, index) => {
      const body = JSON.parse(handle.messageRequests()[index]?.rawBody ?? "{}");
      expect(body.system).toEqual(prefix.systemPrompt);
      expect(body.tools).toEqual(prefix.tools);
      expect(body.model).toBe(prefix.model);
      expect(body.max_tokens).toBe(prefix.maxOutputTokens);
      expect(body.messages).toHaveLength(prefix.forkContextMessages.length);
    });
    expect(announced[1]?.forkContextMessages).toHaveLength(3);
  });
});
