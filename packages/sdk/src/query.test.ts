import { existsSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AbortError } from "./abort-error.js";
import { ErrorResultError } from "./error-result.js";
import type { SDKMessage, SDKResultMessage } from "./messages.js";
import type { HookInput } from "./options.js";
import { OptionsError } from "./options-error.js";
import { query } from "./query.js";
import { forkSession, getSessionMessages, listSessions } from "./session-helpers.js";
import { RuntimeRegistry } from "./shared-runtime.js";
import {
  collectMessages,
  promptStream,
  runQuery,
  runToThrow,
  startHarness,
} from "./test-support/sdk-harness.js";
import { DEFAULT_MODEL } from "./tool-selection.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

/** The main agent's scripted moves, by the last user text; sub-agents answer with their task. */
function brain(request: BrainRequest) {
  const text = request.lastUserText ?? "";
  if (request.querySource === "agent:reader" && request.lastToolResults.length === 0) {
    return { content: [{ type: "tool_use" as const, name: "Read", input: { file_path: "notes.md" } }] };
  }
  if (request.querySource === "agent:writer" && request.lastToolResults.length === 0) {
    return {
      content: [{ type: "tool_use" as const, name: "Write", input: { file_path: "out.txt", content: "x" } }],
    };
  }
  if (request.querySource === "agent:refused") return { content: [], fault: "400" as const };
  if (request.querySource?.startsWith("agent:")) {
    return { content: [{ type: "text" as const, text: `sub-agent ${request.querySource} done` }] };
  }
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) {
    return {
      content: [{ type: "text" as const, text: `done after ${request.lastToolResults.length} results` }],
    };
  }
  if (text.includes("read it with a reader")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "read notes", prompt: "Read notes.md.", subagent_type: "reader" },
        },
      ],
    };
  }
  if (text.includes("ask a refused helper")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "ask", prompt: "Answer it.", subagent_type: "refused" },
        },
      ],
    };
  }
  if (text.includes("write with a writer")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "write out", prompt: "Write out.txt.", subagent_type: "writer" },
        },
      ],
    };
  }
  if (text.includes("review twice")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "review a", prompt: "Review a.", subagent_type: "reviewer" },
        },
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "review b", prompt: "Review b.", subagent_type: "reviewer" },
        },
      ],
    };
  }
  if (text.includes("write the file")) {
    return {
      content: [{ type: "tool_use" as const, name: "Write", input: { file_path: "out.txt", content: "x" } }],
    };
  }
  if (text.includes("add numbers")) {
    return { content: [{ type: "tool_use" as const, name: "mcp__calc__add", input: { a: 2, b: 3 } }] };
  }
  if (text.includes("sleep")) {
    const seconds = /sleep (\d+)/.exec(text)?.[1] ?? "1";
    return { content: [{ type: "tool_use" as const, name: "Bash", input: { command: `sleep ${seconds}` } }] };
  }
  if (text.includes("loop forever")) {
    return { content: [{ type: "tool_use" as const, name: "Read", input: { file_path: "notes.md" } }] };
  }
  return undefined;
}

let harness: Harness;
beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => {
  await harness.close();
});

const resultOf = (messages: readonly SDKMessage[]) => messages.at(-1) as SDKResultMessage;

describe("query() through the simulator", () => {
  it("R-K1: system/init first, assistant and user messages, result last; session_id and uuid on every message", async () => {
    const messages = await runQuery("Summarize notes.md", harness.options());
    expect(messages[0]).toMatchObject({ type: "system", subtype: "init", apiKeySource: "ANTHROPIC_API_KEY" });
    // R-X2: the default adaptive thinking adds a thinking block (its own assistant line) to each reply.
    expect(messages.map((message) => message.type)).toEqual([
      "system",
      "assistant",
      "assistant",
      "assistant",
      "user",
      "assistant",
      "assistant",
      "result",
    ]);
    const sessionId = messages[0]?.session_id;
    for (const message of messages) {
      expect(message.session_id).toBe(sessionId);
      expect(message.uuid).toMatch(/\S/);
    }
    const result = resultOf(messages);
    expect(result).toMatchObject({ subtype: "success", is_error: false, num_turns: 2 });
    expect(result).not.toHaveProperty("errors");
    expect(result.subtype === "success" && result.result).toBe("done after 1 results");
  });

  it("R-K1, R-K2: includePartialMessages adds stream_event messages with parent_tool_use_id null, each request announced by a requesting status", async () => {
    const messages = await runQuery("hello", harness.options({ includePartialMessages: true }));
    const events = messages.filter((message) => message.type === "stream_event");
    expect(events.length).toBeGreaterThan(0);
    expect(events[0]).toMatchObject({
      parent_tool_use_id: null,
      event: { type: "message_start" },
      thinking_display: "omitted",
    });
    // As the Agent SDK: the status comes right before the request's first stream event.
    const status = messages.findIndex((message) => message.type === "system" && message.subtype === "status");
    expect(messages[status]).toMatchObject({ status: "requesting" });
    expect(messages[status + 1]).toBe(events[0]);
    const plain = await runQuery("hello", harness.options());
    expect(plain.filter((message) => message.type === "system" && message.subtype === "status")).toEqual([]);
  });

  it("R-K1, R-K2: agents definitions drive the Agent tool; task_* messages; sub-agent messages carry parent_tool_use_id (the task first, no message for the final report); subagentUsage sums to the totals", async () => {
    harness.sim.clearRequests();
    const messages = await runQuery(
      "review twice",
      harness.options({
        agents: {
          reviewer: {
            description: "Reviews one file",
            // Long enough to be cached (a model's minimum cacheable prefix).
            prompt: `You are the REVIEWER-7 agent. ${"Check each line for typos and style. ".repeat(250)}`,
            tools: ["Read"],
          },
        },
      }),
    );
    expect(messages[0]).toMatchObject({
      subtype: "init",
      agents: ["general-purpose", "Explore", "Plan", "fork", "reviewer"],
    });
    const toolUseIds = messages.flatMap((message) =>
      message.type === "assistant" && message.parent_tool_use_id === null
        ? message.message.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
        : [],
    );
    expect(toolUseIds).toHaveLength(2);
    const started = messages.filter(
      (message) => message.type === "system" && message.subtype === "task_started",
    );
    expect(started.map((message) => "tool_use_id" in message && message.tool_use_id).sort()).toEqual(
      [...toolUseIds].sort(),
    );
    expect(started[0]).toMatchObject({
      subagent_type: "reviewer",
      task_type: "local_agent",
      is_backgrounded: false,
      spawn_depth: 1,
    });
    expect(started.map((message) => "prompt" in message && message.prompt).sort()).toEqual([
      "Review a.",
      "Review b.",
    ]);
    // The Agent SDK's order: the assistant message holding a tool_use, then its fork's messages.
    for (const toolUseId of toolUseIds) {
      const holder = messages.findIndex(
        (message) =>
          message.type === "assistant" &&
          message.message.content.some((block) => block.type === "tool_use" && block.id === toolUseId),
      );
      const first = messages.findIndex(
        (message) =>
          ("tool_use_id" in message && message.tool_use_id === toolUseId) ||
          ("parent_tool_use_id" in message && message.parent_tool_use_id === toolUseId),
      );
      expect(holder).toBeGreaterThanOrEqual(0);
      expect(first).toBeGreaterThan(holder);
    }
    expect(started.map((message) => "description" in message && message.description).sort()).toEqual([
      "review a",
      "review b",
    ]);
    const notifications = messages.filter(
      (message) => message.type === "system" && message.subtype === "task_notification",
    );
    expect(notifications).toHaveLength(2);
    expect(notifications[0]).toMatchObject({ status: "completed" });
    // Each task's record ends (task_updated) just before it reports, under the run id it started with.
    for (const notification of notifications) {
      const at = messages.indexOf(notification);
      const updated = messages[at - 1] as { subtype?: string; run_id?: string; patch?: unknown };
      expect(updated).toMatchObject({ subtype: "task_updated", patch: { status: "completed" } });
      expect(started.some((message) => "run_id" in message && message.run_id === updated.run_id)).toBe(true);
    }
    const progress = messages.filter(
      (message) => message.type === "system" && message.subtype === "task_progress",
    );
    // R-K2: a reviewer only writes its report: no tool call to announce, its notification follows.
    expect(progress).toHaveLength(0);
    const subMessages = messages.filter(
      (message) =>
        (message.type === "assistant" || message.type === "user") && message.parent_tool_use_id !== null,
    );
    expect(
      [
        ...new Set(
          subMessages.map((message) => "parent_tool_use_id" in message && message.parent_tool_use_id),
        ),
      ].sort(),
    ).toEqual([...toolUseIds].sort());
    for (const toolUseId of toolUseIds) {
      const own = subMessages.filter(
        (message) => "parent_tool_use_id" in message && message.parent_tool_use_id === toolUseId,
      );
      // As the Agent SDK: the task is the sub-agent's first (user) message, with whose it is; its
      // final report is the Agent tool's result, not an assistant message of its own (R-K2).
      expect(own[0]).toMatchObject({
        type: "user",
        message: { content: [{ type: "text" }] },
        subagent_type: "reviewer",
        task_description: expect.stringMatching(/^review [ab]$/),
      });
      expect(own.some((message) => message.type === "assistant")).toBe(false);
    }
    // The definition's prompt reached the sub-agents' requests.
    const subRequests = harness.sim.requests().filter((record) => record.rawBody.includes("REVIEWER-7"));
    expect(subRequests.length).toBeGreaterThanOrEqual(2);

    const result = resultOf(messages);
    expect(result.subagentUsage).toHaveLength(2);
    expect(result.subagentUsage.map((entry) => entry.agentType)).toEqual(["reviewer", "reviewer"]);
    expect(result.subagentUsage.map((entry) => entry.parentToolUseId).sort()).toEqual([...toolUseIds].sort());
    const models = Object.values(result.modelUsage);
    const sum = (
      pick: (entry: { inputTokens: number; cacheReadInputTokens: number; outputTokens: number }) => number,
    ) => result.subagentUsage.reduce((total, entry) => total + pick(entry), 0);
    expect(models.reduce((total, model) => total + model.inputTokens, 0)).toBe(
      result.usage.input_tokens + sum((e) => e.inputTokens),
    );
    expect(models.reduce((total, model) => total + model.outputTokens, 0)).toBe(
      result.usage.output_tokens + sum((e) => e.outputTokens),
    );
    expect(models.reduce((total, model) => total + model.cacheReadInputTokens, 0)).toBe(
      result.usage.cache_read_input_tokens + sum((e) => e.cacheReadInputTokens),
    );
    const subCost = result.subagentUsage.reduce((total, entry) => total + entry.costUSD, 0);
    expect(subCost).toBeGreaterThan(0);
    expect(result.total_cost_usd).toBeCloseTo(
      models.reduce((total, model) => total + model.costUSD, 0),
      10,
    );
    // The instances of one agent type share their own prefix's cache (R-K3): the second reads what the first wrote.
    expect(result.cacheReadShare).toBeGreaterThan(0);
    expect(result.subagentUsage.some((entry) => entry.cacheReadShare > 0)).toBe(true);
  });

  it("R-K1: canUseTool is asked with the Agent SDK's arguments; a deny becomes an is_error tool_result and a permission_denials entry", async () => {
    const calls: { toolName: string; input: Record<string, unknown>; options: Record<string, unknown> }[] =
      [];
    const messages = await runQuery(
      "write the file",
      harness.options({
        canUseTool: async (toolName, input, options) => {
          calls.push({ toolName, input, options: { ...options } });
          return { behavior: "deny", message: "not today" };
        },
      }),
    );
    expect(calls).toHaveLength(1);
    expect(calls[0]?.toolName).toBe("Write");
    expect(calls[0]?.input).toMatchObject({ content: "x" });
    expect(calls[0]?.options.signal).toBeInstanceOf(AbortSignal);
    expect(calls[0]?.options.toolUseID).toMatch(/^toolu_/);
    expect(calls[0]?.options.agentID).toBeUndefined();
    const toolResult = messages.find((message) => message.type === "user");
    expect(JSON.stringify(toolResult)).toContain("not today");
    expect(JSON.stringify(toolResult)).toContain('"is_error":true');
    expect(resultOf(messages).permission_denials).toMatchObject([{ tool_name: "Write" }]);
    expect(existsSync(join(harness.dir, "out.txt"))).toBe(false);
  });

  it("R-K2: PermissionRequest callbacks are asked beside canUseTool and the first decision wins; without a decision canUseTool's counts", async () => {
    const run = async (decision: "allow" | "deny" | undefined) => {
      const asked: string[] = [];
      let canUseToolSignal: AbortSignal | undefined;
      const messages = await runQuery(
        "write the file",
        harness.options({
          // Slower than the callbacks, and of the other opinion when they give one.
          canUseTool: async (_toolName, input, options) => {
            asked.push("canUseTool");
            canUseToolSignal = options.signal;
            await new Promise((resolve) => setTimeout(resolve, decision === undefined ? 0 : 1000));
            return decision === "deny"
              ? { behavior: "allow", updatedInput: input }
              : { behavior: "deny", message: "canUseTool says no" };
          },
          hooks: {
            PermissionRequest: [
              {
                hooks: [
                  async (input) => {
                    asked.push(`${input.hook_event_name} ${"tool_name" in input ? input.tool_name : ""}`);
                    expect(input).toMatchObject({
                      permission_mode: "default",
                      tool_input: { content: "x" },
                      permission_suggestions: [{ type: "setMode", mode: "acceptEdits" }],
                    });
                    if (decision === undefined) return {};
                    return {
                      hookSpecificOutput: {
                        hookEventName: "PermissionRequest" as const,
                        decision:
                          decision === "allow"
                            ? { behavior: "allow" as const }
                            : { behavior: "deny" as const, message: "the hook says no" },
                      },
                    };
                  },
                ],
              },
            ],
          },
        }),
      );
      const toolResult = JSON.stringify(messages.find((message) => message.type === "user"));
      return {
        asked,
        toolResult,
        denials: resultOf(messages).permission_denials,
        aborted: canUseToolSignal?.aborted,
      };
    };
    const outFile = join(harness.dir, "out.txt");
    const allowed = await run("allow");
    expect(allowed.asked).toEqual(["canUseTool", "PermissionRequest Write"]);
    expect(allowed.denials).toEqual([]);
    expect(allowed.aborted).toBe(true);
    expect(existsSync(outFile)).toBe(true);
    rmSync(outFile);
    const denied = await run("deny");
    expect(denied.toolResult).toContain("the hook says no");
    expect(denied.denials).toMatchObject([{ tool_name: "Write" }]);
    expect(existsSync(outFile)).toBe(false);
    const open = await run(undefined);
    expect(open.toolResult).toContain("canUseTool says no");
    expect(open.asked).toEqual(["canUseTool", "PermissionRequest Write"]);
  });

  it("R-K2: a sub-agent's call asked about in the parent gives its PermissionRequest callbacks agent_id and agent_type, as its tool hooks get them", async () => {
    const inputs: HookInput[] = [];
    const messages = await runQuery(
      "write with a writer",
      harness.options({
        agents: { writer: { description: "Writes a file", prompt: "You write.", tools: ["Write"] } },
        canUseTool: async () => ({ behavior: "deny", message: "not today" }),
        hooks: {
          PermissionRequest: [
            {
              hooks: [
                async (input) => {
                  inputs.push(input);
                  return {};
                },
              ],
            },
          ],
        },
      }),
    );
    const started = messages.find(
      (message) => message.type === "system" && message.subtype === "task_started",
    );
    expect(inputs).toHaveLength(1);
    expect(inputs[0]).toMatchObject({
      hook_event_name: "PermissionRequest",
      tool_name: "Write",
      agent_id: started !== undefined && "task_id" in started ? started.task_id : "(no task)",
      agent_type: "writer",
    });
    expect(existsSync(join(harness.dir, "out.txt"))).toBe(false);
  });

  it("R-K2: each tool result carries tool_result_meta (what decided the call, a sub-agent's too); a call refused with nobody to ask is announced by system/permission_denied between its call and its result", async () => {
    const resultLine = (messages: readonly SDKMessage[]) =>
      messages.find(
        (message) =>
          message.type === "user" &&
          Array.isArray(message.message.content) &&
          message.message.content.some((block) => block.type === "tool_result"),
      );
    const callOf = (messages: readonly SDKMessage[]) =>
      messages.find(
        (message) =>
          message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use"),
      );
    const toolUseIdOf = (message: SDKMessage | undefined) =>
      message?.type === "assistant"
        ? message.message.content.find((block) => block.type === "tool_use")?.id
        : undefined;

    // Nobody to ask: refused, announced, and reported as a question the user did not answer.
    const refused = await runQuery("write the file", harness.options({}));
    const refusedId = toolUseIdOf(callOf(refused));
    const announced = refused.findIndex(
      (message) => message.type === "system" && message.subtype === "permission_denied",
    );
    expect(refused[announced]).toMatchObject({
      tool_name: "Write",
      tool_use_id: refusedId,
      decision_reason_type: "other",
      message: expect.stringContaining("but you haven't granted it yet"),
    });
    expect(announced).toBeGreaterThan(refused.indexOf(callOf(refused) as SDKMessage));
    expect(announced).toBeLessThan(refused.indexOf(resultLine(refused) as SDKMessage));
    expect(resultLine(refused)).toMatchObject({
      tool_result_meta: [
        {
          id: refusedId,
          non_execution_kind: "user-rejected",
          permission_decision: { decision: "reject", source: "config" },
        },
      ],
    });

    // canUseTool's allow that saves a rule: the user's lasting decision (a changed input is marked
    // only when a hook changed it, as Claude Code marks it).
    const saved = await runQuery(
      "write the file",
      harness.options({
        canUseTool: async (_toolName, input) => ({
          behavior: "allow",
          updatedInput: { ...input, content: "y" },
          updatedPermissions: [
            {
              type: "addRules",
              rules: [{ toolName: "Write" }],
              behavior: "allow",
              destination: "localSettings",
            },
          ],
        }),
      }),
    );
    rmSync(join(harness.dir, "out.txt"), { force: true });
    expect(
      saved.some((message) => message.type === "system" && message.subtype === "permission_denied"),
    ).toBe(false);
    expect((resultLine(saved) as { tool_result_meta?: unknown }).tool_result_meta).toEqual([
      {
        id: toolUseIdOf(callOf(saved)),
        permission_decision: { decision: "accept", source: "user_permanent" },
      },
    ]);

    // canUseTool's refusal: the program's rule, not the user's unanswered question.
    const denied = await runQuery(
      "write the file",
      harness.options({ canUseTool: async () => ({ behavior: "deny", message: "not today" }) }),
    );
    expect((resultLine(denied) as { tool_result_meta?: unknown }).tool_result_meta).toEqual([
      {
        id: toolUseIdOf(callOf(denied)),
        non_execution_kind: "permission-rule",
        permission_decision: { decision: "reject", source: "user_reject" },
      },
    ]);

    // A PreToolUse hook's allow with a changed input: the hook decided, and the input is marked.
    const hooked = await runQuery(
      "write the file",
      harness.options({
        hooks: {
          PreToolUse: [
            {
              hooks: [
                async (input) => ({
                  hookSpecificOutput: {
                    hookEventName: "PreToolUse" as const,
                    permissionDecision: "allow" as const,
                    updatedInput: {
                      ...("tool_input" in input ? (input.tool_input as object) : {}),
                      content: "z",
                    },
                  },
                }),
              ],
            },
          ],
        },
      }),
    );
    rmSync(join(harness.dir, "out.txt"), { force: true });
    expect((resultLine(hooked) as { tool_result_meta?: unknown }).tool_result_meta).toEqual([
      {
        id: toolUseIdOf(callOf(hooked)),
        input_changed: true,
        permission_decision: { decision: "accept", source: "hook", reason_type: "hook" },
      },
    ]);

    // A sub-agent's Read, decided in its worker by the mode's read-only set.
    const delegated = await runQuery(
      "read it with a reader",
      harness.options({
        agents: { reader: { description: "Reads a file", prompt: "You read.", tools: ["Read"] } },
      }),
    );
    const subResult = delegated.find(
      (message) =>
        message.type === "user" && message.parent_tool_use_id !== null && "tool_result_meta" in message,
    );
    const subCall = delegated.find(
      (message) => message.type === "assistant" && message.parent_tool_use_id !== null,
    );
    expect((subResult as { tool_result_meta?: unknown } | undefined)?.tool_result_meta).toEqual([
      {
        id: toolUseIdOf(subCall),
        permission_decision: { decision: "accept", source: "config", reason_type: "mode" },
      },
    ]);
  });

  it("R-K1: hook callbacks get the Agent SDK's (input, toolUseID, { signal }); a PreToolUse deny stops the call; a failed call fires PostToolUseFailure, not PostToolUse", async () => {
    const seen: { event: string; input: HookInput; toolUseID: string | undefined; signal: boolean }[] = [];
    const record = (event: string) => [
      {
        hooks: [
          async (input: HookInput, toolUseID: string | undefined, options: { signal: AbortSignal }) => {
            seen.push({ event, input, toolUseID, signal: options.signal instanceof AbortSignal });
            return event === "PreToolUse"
              ? {
                  hookSpecificOutput: {
                    hookEventName: "PreToolUse" as const,
                    permissionDecision: "deny" as const,
                    permissionDecisionReason: "hook says no",
                  },
                }
              : {};
          },
        ],
      },
    ];
    const messages = await runQuery(
      "write the file",
      harness.options({
        permissionMode: "acceptEdits",
        hooks: {
          SessionStart: record("SessionStart"),
          UserPromptSubmit: record("UserPromptSubmit"),
          PreToolUse: [{ matcher: "Write|Edit", hooks: record("PreToolUse")[0]?.hooks ?? [] }],
          PostToolUse: record("PostToolUse"),
          Stop: record("Stop"),
          SessionEnd: record("SessionEnd"),
        },
      }),
    );
    // The denied call never ran, so no PostToolUse for it; SessionEnd once the session is over (R-K2).
    expect(seen.map((entry) => entry.event)).toEqual([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "Stop",
      "SessionEnd",
    ]);
    expect(seen.at(-1)?.input).toMatchObject({ hook_event_name: "SessionEnd", reason: "other" });
    const pre = seen.find((entry) => entry.event === "PreToolUse");
    expect(pre?.input).toMatchObject({
      hook_event_name: "PreToolUse",
      tool_name: "Write",
      session_id: messages[0]?.session_id,
      cwd: harness.dir,
    });
    expect(pre?.toolUseID).toMatch(/^toolu_/);
    expect(seen.every((entry) => entry.signal)).toBe(true);
    expect(seen.find((entry) => entry.event === "UserPromptSubmit")?.input).toMatchObject({
      prompt: "write the file",
    });
    expect(JSON.stringify(messages.find((message) => message.type === "user"))).toContain("hook says no");
    expect(existsSync(join(harness.dir, "out.txt"))).toBe(false);
    seen.length = 0;
    await runQuery("Summarize notes.md", harness.options({ hooks: { PostToolUse: record("PostToolUse") } }));
    expect(seen[0]?.input).toMatchObject({
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      // Read's structured output, as the Agent SDK gives it (R-K2).
      tool_response: { type: "text", file: { startLine: 1 } },
    });
    // A failed call is a PostToolUseFailure with the error's text, and no PostToolUse.
    seen.length = 0;
    await runQuery(
      "Summarize missing.md",
      harness.options({
        hooks: { PostToolUse: record("PostToolUse"), PostToolUseFailure: record("PostToolUseFailure") },
      }),
    );
    expect(seen.map((entry) => entry.event)).toEqual(["PostToolUseFailure"]);
    expect(seen[0]?.input).toMatchObject({
      hook_event_name: "PostToolUseFailure",
      tool_name: "Read",
      error: expect.stringContaining("File does not exist."),
      is_interrupt: false,
    });
    expect(seen[0]?.toolUseID).toMatch(/^toolu_/);
  });

  it("R-K2: hook inputs carry the Agent SDK's fields — the prompt's prompt_id in every event, the requests' effort in the turn's hooks, duration_ms after a call, background_tasks and session_crons for Stop; a hook without a tool gets a callback id of its own", async () => {
    const seen: { event: string; input: Record<string, unknown>; toolUseID: string | undefined }[] = [];
    const record = (event: string) => [
      {
        hooks: [
          async (input: HookInput, toolUseID: string | undefined) => {
            seen.push({ event, input: input as unknown as Record<string, unknown>, toolUseID });
            return {};
          },
        ],
      },
    ];
    await runQuery(
      "Summarize notes.md",
      harness.options({
        hooks: {
          UserPromptSubmit: record("UserPromptSubmit"),
          PreToolUse: record("PreToolUse"),
          PostToolUse: record("PostToolUse"),
          Stop: record("Stop"),
        },
      }),
    );
    expect(seen.map((entry) => entry.event)).toEqual([
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
    ]);
    const promptId = seen[0]?.input.prompt_id;
    expect(promptId).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.every((entry) => entry.input.prompt_id === promptId)).toBe(true);
    const byEvent = (event: string) => seen.find((entry) => entry.event === event);
    // The effort the requests ask for (Claude Code's default, medium), in the turn's hooks only.
    for (const event of ["PreToolUse", "PostToolUse", "Stop"])
      expect(byEvent(event)?.input.effort).toEqual({ level: "medium" });
    expect(byEvent("UserPromptSubmit")?.input).not.toHaveProperty("effort");
    expect(byEvent("PostToolUse")?.input.duration_ms).toEqual(expect.any(Number));
    expect(byEvent("Stop")?.input).toMatchObject({ background_tasks: [], session_crons: [] });
    expect(byEvent("PostToolUse")?.toolUseID).toMatch(/^toolu_/);
    for (const event of ["UserPromptSubmit", "Stop"])
      expect(byEvent(event)?.toolUseID).toMatch(/^[0-9a-f-]{36}$/);
    // The next query's prompt is another prompt.
    seen.length = 0;
    await runQuery("hello", harness.options({ hooks: { UserPromptSubmit: record("UserPromptSubmit") } }));
    expect(seen[0]?.input.prompt_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[0]?.input.prompt_id).not.toBe(promptId);
  });

  it("R-L15: every hook callback's output is used, as a settings hook's is — SessionStart's and UserPromptSubmit's context reach the main agent's model, SubagentStart's the sub-agent's (after its task, in the event's words)", async () => {
    harness.sim.clearRequests();
    const starts: HookInput[] = [];
    const context = (hookEventName: "SessionStart" | "UserPromptSubmit" | "SubagentStart", text: string) => [
      {
        hooks: [
          async (input: HookInput) => {
            if (input.hook_event_name === "SubagentStart") starts.push(input);
            return { hookSpecificOutput: { hookEventName, additionalContext: text } };
          },
        ],
      },
    ];
    const messages = await runQuery(
      "review twice",
      harness.options({
        agents: {
          reviewer: { description: "Reviews one file", prompt: "You are a reviewer.", tools: ["Read"] },
        },
        hooks: {
          SessionStart: context("SessionStart", "SESSION-NOTE-41"),
          UserPromptSubmit: context("UserPromptSubmit", "PROMPT-NOTE-42"),
          SubagentStart: context("SubagentStart", "SUBAGENT-NOTE-43"),
        },
      }),
    );
    expect(resultOf(messages).subtype).toBe("success");
    const main = harness.sim.requests().filter((record) => record.querySource === "sdk");
    expect(main[0]?.rawBody).toContain("SESSION-NOTE-41");
    expect(main[0]?.rawBody).toContain("PROMPT-NOTE-42");
    const subs = harness.sim.requests().filter((record) => record.querySource === "agent:reviewer");
    expect(subs).toHaveLength(2);
    for (const sub of subs) expect(sub.rawBody).toContain("SUBAGENT-NOTE-43");
    // As Claude Code places it (claude-cli scenario hooks-subagent-start-context): after the task,
    // a `role: "system"` message in the event's words.
    const first = JSON.parse(subs[0]?.rawBody ?? "{}") as { messages: { role: string; content: unknown }[] };
    const holding = first.messages.findIndex((m) => JSON.stringify(m.content).includes("SUBAGENT-NOTE-43"));
    expect(first.messages[holding]?.role).toBe("system");
    expect(JSON.stringify(first.messages[holding]?.content)).toContain(
      "SubagentStart hook additional context: SUBAGENT-NOTE-43",
    );
    expect(first.messages[0]?.role).toBe("user");
    expect(holding).toBe(1);
    expect(starts).toHaveLength(2);
    expect(starts[0]).toMatchObject({ hook_event_name: "SubagentStart", agent_type: "reviewer" });
  });

  it("R-K2, R-L15: a program's StopFailure callbacks are called for a sub-agent whose request the API refuses (its agent_id and agent_type, the error named as its message names it); the main turn goes on", async () => {
    const failures: HookInput[] = [];
    const messages = await runQuery(
      "ask a refused helper",
      harness.options({
        agents: { refused: { description: "Answers", prompt: "You answer.", tools: ["Read"] } },
        hooks: {
          StopFailure: [
            {
              hooks: [
                async (input: HookInput) => {
                  failures.push(input);
                  return {};
                },
              ],
            },
          ],
        },
      }),
    );
    expect(resultOf(messages).subtype).toBe("success");
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatchObject({
      hook_event_name: "StopFailure",
      agent_type: "refused",
      error: "unknown",
      last_assistant_message: expect.stringMatching(/^API Error: 400 \S/),
    });
    expect((failures[0] as { agent_id?: string }).agent_id).toEqual(expect.any(String));
  });

  it("R-K2, R-X1: /compact streams as Claude Code's: compacting status, the hooks, status with the outcome, init, the boundary (logical_parent_uuid, cumulative_dropped_tokens, duration_ms), the summary and the command's output naming each hook", async () => {
    const filler = Array.from({ length: 400 }, (_, i) => `Line ${i} of the notes to keep in mind.`).join(
      "\n",
    );
    const first = await runQuery(`Say hello.\n${filler}`, harness.options());
    const sessionId = resultOf(first).session_id;
    const lastBefore = first.filter((message) => message.type === "assistant").at(-1)?.uuid;
    const seen: string[] = [];
    const callback = (answer: { systemMessage?: string }) => ({
      hooks: [
        async (input: HookInput) => {
          seen.push(`hook:${input.hook_event_name}`);
          return answer;
        },
      ],
    });
    const run = query({
      prompt: "/compact keep the API names",
      options: harness.options({
        resume: sessionId,
        hooks: {
          PreCompact: [callback({ systemMessage: "kept the API names" })],
          PostCompact: [callback({})],
        },
      }),
    });
    const messages: SDKMessage[] = [];
    for await (const message of run) {
      messages.push(message);
      seen.push(
        message.type === "system" || message.type === "result"
          ? `${message.type}/${message.subtype}`
          : message.type,
      );
    }
    expect(seen).toEqual([
      "system/status",
      "hook:PreCompact",
      "hook:PostCompact",
      "system/status",
      "system/init",
      "system/compact_boundary",
      "user",
      "user",
      "result/success",
    ]);
    expect(messages[0]).toMatchObject({ status: "compacting", session_id: sessionId });
    expect(messages[1]).toMatchObject({ status: null, compact_result: "success" });
    const boundary = messages[3] as Extract<SDKMessage, { subtype: "compact_boundary" }>;
    const { pre_tokens, post_tokens } = boundary.compact_metadata;
    expect(boundary.compact_metadata).toMatchObject({
      trigger: "manual",
      cumulative_dropped_tokens: pre_tokens - post_tokens,
      duration_ms: expect.any(Number),
    });
    expect(boundary.logical_parent_uuid).toBe(lastBefore);
    expect(messages[4]).toMatchObject({
      type: "user",
      isReplay: false,
      isSynthetic: true,
      parent_tool_use_id: null,
      message: { role: "user", content: expect.stringContaining("<summary>") },
    });
    expect(messages[5]).toMatchObject({
      type: "user",
      isReplay: true,
      local_command_run: { command: "compact", args: "keep the API names" },
      message: {
        role: "user",
        content:
          "<local-command-stdout>Compacted PreCompact [callback] completed successfully: kept the API names\nPostCompact [callback] completed successfully</local-command-stdout>",
      },
    });
    expect(messages[6]).toMatchObject({ type: "result", local_command: "compact", result: "" });
  });

  it("R-K1: tool() + createSdkMcpServer(): the model sees mcp__calc__add and gets the handler's CallToolResult", async () => {
    const { createSdkMcpServer, tool } = await import("./sdk-mcp-server.js");
    const { z } = await import("zod");
    const received: unknown[] = [];
    const calc = createSdkMcpServer({
      name: "calc",
      tools: [
        tool(
          "add",
          "Adds two numbers",
          { a: z.number(), b: z.number() },
          async (args) => {
            received.push(args);
            return { content: [{ type: "text", text: String(args.a + args.b) }] };
          },
          { annotations: { readOnlyHint: true } },
        ),
      ],
    });
    harness.sim.clearRequests();
    const run = query({ prompt: "add numbers", options: harness.options({ mcpServers: { calc } }) });
    expect(await run.mcpServerStatus()).toEqual([]);
    const messages = await collectMessages(run);
    expect(received).toEqual([{ a: 2, b: 3 }]);
    expect(messages[0]).toMatchObject({ mcp_servers: [{ name: "calc", status: "connected" }] });
    expect((messages[0] as { tools: string[] }).tools).toContain("mcp__calc__add");
    const second = harness.sim.requests().filter((record) => record.querySource === "sdk")[1];
    expect(second?.rawBody ?? "").toContain('"tool_use_id"');
    expect(second?.rawBody ?? "").toMatch(/"content":("5"|\[\{"type":"text","text":"5"\}\])/);
    // A real McpServer of @modelcontextprotocol/sdk holds the tools (the Agent SDK's `instance`),
    // loaded on first read from the MCP SDK's CommonJS build (R-V2: not at import).
    const { McpServer } = createRequire(import.meta.url)("@modelcontextprotocol/sdk/server/mcp.js");
    expect(calc.instance).toBeInstanceOf(McpServer);
    expect(calc.instance).toBe(calc.instance);
  });

  it("R-K1: one createSdkMcpServer serves concurrent queries (each connects its own copy over the in-memory transport)", async () => {
    const { createSdkMcpServer, tool } = await import("./sdk-mcp-server.js");
    const { z } = await import("zod");
    let calls = 0;
    const calc = createSdkMcpServer({
      name: "calc",
      tools: [
        tool("add", "Adds two numbers", { a: z.number(), b: z.number() }, async (args) => {
          calls++;
          return { content: [{ type: "text", text: String(args.a + args.b) }] };
        }),
      ],
    });
    const runs = await Promise.all(
      [1, 2, 3].map(() =>
        runQuery("add numbers", harness.options({ mcpServers: { calc }, allowedTools: ["mcp__calc__add"] })),
      ),
    );
    expect(calls).toBe(3);
    for (const messages of runs) {
      expect(messages[0]).toMatchObject({ mcp_servers: [{ name: "calc", status: "connected" }] });
      expect(resultOf(messages)).toMatchObject({ subtype: "success" });
    }
  });

  // Both endpoints: the harness's simulator over HTTP, and the embedded one (no key), whose
  // interrupted stream once left the query waiting for ever.
  it.each([
    ["the simulator's URL", "review twice", {}],
    [
      "the embedded simulator",
      "Summarize notes.md and more.md with sub-agents",
      { env: { HOME: "/nonexistent" } },
    ],
  ])(
    "R-K1, R-K2: abortController aborting while forks start yields nothing more and throws AbortError with the turn's result, last (%s)",
    async (_, prompt, extra) => {
      writeFileSync(join(harness.dir, "more.md"), "# More\n");
      for (const at of [1, 2]) {
        const abortController = new AbortController();
        let started = 0;
        const { messages, thrown } = await runToThrow(
          query({
            prompt,
            options: harness.options({
              abortController,
              agents: { reviewer: { description: "Reviews one file", prompt: "You review." } },
              ...extra,
            }),
          }),
          (message) => {
            if (message.type === "system" && message.subtype === "task_started" && ++started === at) {
              abortController.abort();
            }
          },
        );
        // R-K2: as the Agent SDK's, nothing is yielded after the abort (the message the program
        // aborted at is the last) and the query throws AbortError, which keeps what followed:
        // the turn's result, last (what forkloop run reports a Ctrl+C with).
        expect(messages.at(-1)).toMatchObject({ type: "system", subtype: "task_started" });
        expect(
          messages.filter((message) => message.type === "system" && message.subtype === "task_started"),
        ).toHaveLength(at);
        expect(thrown).toBeInstanceOf(AbortError);
        const after = (thrown as AbortError).messagesAfterAbort;
        expect(after.at(-1)).toMatchObject({ type: "result", subtype: "error_during_execution" });
        expect(after.filter((message) => message.type === "result")).toHaveLength(1);
      }
    },
  );

  it("R-K2: a sub-agent's tool call is announced by task_progress as it starts — before the message holding it — in Claude Code's words for the activity", async () => {
    const messages = await runQuery(
      "read it with a reader",
      harness.options({
        agents: { reader: { description: "Reads a file", prompt: "You read.", tools: ["Read"] } },
      }),
    );
    const reads = messages.filter(
      (message) =>
        message.type === "assistant" &&
        message.parent_tool_use_id !== null &&
        message.message.content.some((block) => block.type === "tool_use" && block.name === "Read"),
    );
    expect(reads).toHaveLength(1);
    for (const read of reads) {
      const at = messages.indexOf(read);
      const parent = "parent_tool_use_id" in read ? read.parent_tool_use_id : undefined;
      const before = messages
        .slice(0, at)
        .filter(
          (message) =>
            message.type === "system" &&
            message.subtype === "task_progress" &&
            message.tool_use_id === parent,
        )
        .at(-1);
      expect(before).toMatchObject({
        last_tool_name: "Read",
        description: "Reading notes.md",
      });
    }
  });

  it("R-K2: a sub-agent's tool call is announced by task_progress once, as its block completes — before the call's PreToolUse hook, as Claude Code sends it", async () => {
    // Messages and hook calls on one line, in the order the program sees them.
    const seen: string[] = [];
    const messages: SDKMessage[] = [];
    for await (const message of query({
      prompt: "read it with a reader",
      options: harness.options({
        agents: { reader: { description: "Reads a file", prompt: "You read.", tools: ["Read"] } },
        hooks: {
          PreToolUse: [
            {
              hooks: [
                async (input) => {
                  if ("tool_name" in input) seen.push(`hook PreToolUse(${input.tool_name})`);
                  return {};
                },
              ],
            },
          ],
        },
      }),
    })) {
      messages.push(message);
      if (message.type === "system" && message.subtype === "task_progress")
        seen.push(`task_progress ${message.description}`);
      else if (message.type === "assistant" && message.parent_tool_use_id !== null)
        seen.push(`sub-agent ${message.message.content.map((block) => block.type).join(",")}`);
    }
    expect(seen).toEqual([
      "hook PreToolUse(Agent)",
      "task_progress Reading notes.md",
      "hook PreToolUse(Read)",
      "sub-agent tool_use",
    ]);
    const notification = messages.find(
      (message) => message.type === "system" && message.subtype === "task_notification",
    );
    expect(notification).toMatchObject({ status: "completed", usage: { tool_uses: 1 } });
  });
  it("R-K1: outputFormat sends output_config.format (and effort) on the main loop's requests and parses the reply into result.structured_output", async () => {
    harness.sim.clearRequests();
    const schema = {
      type: "object",
      properties: { title: { type: "string" }, lines: { type: "integer" } },
      required: ["title", "lines"],
      additionalProperties: false,
    };
    const messages = await runQuery(
      "describe notes.md as JSON",
      harness.options({ outputFormat: { type: "json_schema", schema }, effort: "high" }),
    );
    const result = resultOf(messages);
    expect(result).toMatchObject({ subtype: "success", is_error: false });
    expect(result.structured_output).toEqual(JSON.parse(result.subtype === "success" ? result.result : ""));
    expect(result.structured_output).toMatchObject({ title: expect.any(String), lines: expect.any(Number) });
    const sent = harness.sim.requests().filter((record) => record.querySource === "sdk");
    expect(sent.length).toBeGreaterThan(0);
    for (const record of sent) {
      expect(JSON.parse(record.rawBody).output_config).toEqual({
        effort: "high",
        format: { type: "json_schema", schema },
      });
    }
  });

  // Structured outputs page (https://platform.claude.com/docs/en/build-with-claude/structured-outputs):
  // an object must set additionalProperties to false; the API refuses one that leaves it out.
  it("R-X3, R-D2: an outputFormat schema with open objects is sent closed (additionalProperties: false on each) and answered", async () => {
    harness.sim.clearRequests();
    const schema = {
      type: "object",
      properties: { file: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
      required: ["file"],
    };
    const messages = await runQuery(
      "describe notes.md as JSON",
      harness.options({ outputFormat: { type: "json_schema", schema } }),
    );
    expect(resultOf(messages)).toMatchObject({ subtype: "success", is_error: false });
    const sent = harness.sim.requests().filter((record) => record.querySource === "sdk");
    expect(sent.length).toBeGreaterThan(0);
    for (const record of sent) {
      expect(JSON.parse(record.rawBody).output_config.format.schema).toEqual({
        ...schema,
        additionalProperties: false,
        properties: { file: { ...schema.properties.file, additionalProperties: false } },
      });
    }
    expect(schema).not.toHaveProperty("additionalProperties");
  });

  // Claude Code 2.1.332 (observed) offers the schema, as written, as its StructuredOutput tool's
  // input schema; structured outputs refuse minLength and minimum in output_config.format.
  it("R-K2: an outputFormat schema with constraints structured outputs refuse (minLength, minimum) is answered: they travel in the descriptions, as --json-schema's do", async () => {
    harness.sim.clearRequests();
    const schema = {
      type: "object",
      properties: { title: { type: "string", minLength: 2 }, lines: { type: "integer", minimum: 1 } },
      required: ["title", "lines"],
      additionalProperties: false,
    };
    const messages = await runQuery(
      "describe notes.md as JSON",
      harness.options({ outputFormat: { type: "json_schema", schema } }),
    );
    const result = resultOf(messages);
    expect(result).toMatchObject({ subtype: "success", is_error: false });
    expect(result.structured_output).toMatchObject({ title: expect.any(String), lines: expect.any(Number) });
    const sent = harness.sim.requests().filter((record) => record.querySource === "sdk");
    expect(sent.length).toBeGreaterThan(0);
    for (const record of sent) {
      const properties = JSON.parse(record.rawBody).output_config.format.schema.properties;
      expect(properties.title).toEqual({ type: "string", description: "{minLength: 2}" });
      expect(properties.lines).toEqual({ type: "integer", description: "{minimum: 1}" });
    }
    expect(schema.properties.title).toHaveProperty("minLength", 2);
  });

  it("R-K1, R-K2: maxBudgetUsd ends with error_max_budget_usd; maxTurns with error_max_turns; each result is yielded, then thrown (the Agent SDK's ErrorResultError), worded as the Agent SDK's", async () => {
    const broke = await runToThrow(
      query({ prompt: "loop forever", options: harness.options({ maxBudgetUsd: 0.000001 }) }),
    );
    expect(resultOf(broke.messages)).toMatchObject({
      subtype: "error_max_budget_usd",
      is_error: true,
      errors: ["Reached maximum budget ($0.000001)"],
      terminal_reason: "budget_exhausted",
      stop_reason: null,
    });
    // The turn ends at the reply that reached the budget: nothing the loop recorded after it
    // (interrupted tool results, the interrupt notice) is yielded.
    expect(broke.messages.at(-2)?.type).toBe("assistant");
    expect(broke.messages.at(-1)?.type).toBe("result");
    expect(broke.thrown).toBeInstanceOf(ErrorResultError);
    expect((broke.thrown as ErrorResultError).message).toBe(
      "Claude Code returned an error result: Reached maximum budget ($0.000001)",
    );
    expect((broke.thrown as ErrorResultError).result).toBe(broke.messages.at(-1));
    const capped = await runToThrow(
      query({ prompt: "loop forever", options: harness.options({ maxTurns: 1 }) }),
    );
    expect(resultOf(capped.messages)).toMatchObject({
      subtype: "error_max_turns",
      is_error: true,
      terminal_reason: "max_turns",
      errors: ["Reached maximum number of turns (1)"],
    });
    expect(capped.thrown).toBeInstanceOf(ErrorResultError);
    expect((capped.thrown as ErrorResultError).message).toBe(
      "Claude Code returned an error result: Reached maximum number of turns (1)",
    );
    // A successful query ends without throwing.
    expect((await runToThrow(query({ prompt: "hello", options: harness.options() }))).thrown).toBeUndefined();
  });

  it("R-K1: resume continues a session; forkSession (option and helper) copies it to a new id and leaves the original", async () => {
    const first = await runQuery("remember the word PELICAN", harness.options());
    const id = first[0]?.session_id ?? "";
    expect((await listSessions(harness.at)).map((session) => session.sessionId)).toContain(id);
    const before = await getSessionMessages(id, harness.at);
    expect(before.map((message) => message.type)).toEqual(["user", "assistant"]);

    harness.sim.clearRequests();
    const resumed = await runQuery("what was the word?", harness.options({ resume: id }));
    expect(resumed[0]?.session_id).toBe(id);
    expect(harness.sim.requests()[0]?.rawBody ?? "").toContain("PELICAN");

    const forked = await runQuery("fork it", harness.options({ resume: id, forkSession: true }));
    const forkedId = forked[0]?.session_id ?? "";
    expect(forkedId).not.toBe(id);
    expect((await getSessionMessages(forkedId, harness.at)).length).toBe(6);
    expect((await getSessionMessages(id, harness.at)).length).toBe(4);

    const copy = await forkSession(id, harness.at);
    expect((await getSessionMessages(copy.sessionId, harness.at)).length).toBe(4);
    await expect(runQuery("x", harness.options({ resume: "no-such-session" }))).rejects.toThrow(OptionsError);
  });

  it("R-S12: the hooks option's matchers run on the settings matchers' linear-time engine — a lookahead is refused before anything is sent (OptionsError naming the hook and the fix), where V8's RegExp (control) takes it", async () => {
    const before = harness.sim.requests().length;
    const hook = async () => ({});
    const hooks = {
      PreToolUse: [
        { matcher: "Write|Edit", hooks: [hook] },
        { matcher: "(?=Bash)Bash", hooks: [hook] },
      ],
    };
    await expect(runQuery("x", harness.options({ hooks }))).rejects.toThrow(
      /hooks\.PreToolUse\[1\]\.matcher "\(\?=Bash\)Bash" uses lookahead.*Fix:/,
    );
    expect(harness.sim.requests().length).toBe(before);
    expect(/^(?:(?=Bash)Bash)$/.test("Bash")).toBe(true);
  });

  it("R-R5: a session in use refuses a second resume (OptionsError naming the owner, nothing sent); free again once it ends", async () => {
    const first = await runQuery("remember the word HERON", harness.options());
    const id = first[0]?.session_id ?? "";
    const input = promptStream();
    const running = query({ prompt: input.stream, options: harness.options({ resume: id }) });
    input.push("what was the word?");
    const firstMessage = await running.next(); // system/init: the session has started, lock held
    expect(firstMessage.value).toMatchObject({ type: "system", session_id: id });
    harness.sim.clearRequests();
    const second = runQuery("and again?", harness.options({ resume: id }));
    await expect(second).rejects.toThrow(new RegExp(`session ${id} is in use by this process`));
    await expect(runQuery("continue", harness.options({ continue: true }))).rejects.toThrow(OptionsError);
    input.end();
    await collectMessages(running);
    expect(harness.sim.requests().filter((request) => request.rawBody.includes("and again"))).toEqual([]);
    const after = await runQuery("one more", harness.options({ resume: id }));
    expect(resultOf(after).subtype).toBe("success");
  });

  it("R-K1: streaming input — two messages sent during a turn are queued into it (R-L2); interrupt() with nothing waiting is a hard interrupt (R-L16)", async () => {
    harness.sim.clearRequests();
    const input = promptStream();
    const run = query({ prompt: input.stream, options: harness.options({ allowedTools: ["Bash"] }) });
    input.push("sleep 1");
    const messages: SDKMessage[] = [];
    let pushed = false;
    let interrupted = false;
    const { thrown } = await runToThrow(run, (message) => {
      messages.push(message);
      const toolUse =
        message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use");
      if (toolUse && !pushed) {
        pushed = true;
        input.push("queued one");
        input.push("queued two");
      }
      if (message.type === "result" && messages.filter((m) => m.type === "result").length === 1)
        input.push("sleep 20");
      if (toolUse && pushed && messages.filter((m) => m.type === "result").length === 1 && !interrupted) {
        interrupted = true;
        void run.interrupt();
        input.end();
      }
    });
    // The input ended after an interrupted turn: the query ends on its error result, thrown.
    expect(thrown).toBeInstanceOf(ErrorResultError);
    const results = messages.filter((message): message is SDKResultMessage => message.type === "result");
    expect(results).toHaveLength(2);
    expect(results[0]?.subtype).toBe("success");
    // Both queued messages joined the first turn's second request.
    const second = harness.sim.requests().filter((record) => record.querySource === "sdk")[1];
    const body = second?.rawBody ?? "";
    expect(body).toContain("queued one");
    expect(body).toContain("queued two");
    // R-K2: as in the Agent SDK, the program's own input is not echoed back as user messages.
    expect(JSON.stringify(messages.filter((message) => message.type === "user"))).not.toContain("queued one");
    expect(results[1]?.subtype).toBe("error_during_execution");
    // R-K2: interrupted as its tool call was handed out, the turn ended during tool use, and the
    // result says so as the Agent SDK's does: the prompt, the tool result and the notice counted.
    expect(results[1]).toMatchObject({
      terminal_reason: "aborted_tools",
      num_turns: 3,
      errors: ["[ede_diagnostic] result_type=user last_content_type=n/a stop_reason=tool_use"],
    });
    // The hard path leaves the interrupt notice (a submit-interrupt would not, R-L16).
    expect(JSON.stringify(messages.filter((message) => message.type === "user"))).toContain(
      "interrupted by user",
    );
    expect(
      messages.filter((message) => message.type === "system" && message.subtype === "init"),
    ).toHaveLength(2);
  });

  it("R-K1: bypassPermissions needs allowDangerouslySkipPermissions; deny rules beat bypass; unknown options warn once", async () => {
    await expect(runQuery("hi", harness.options({ permissionMode: "bypassPermissions" }))).rejects.toThrow(
      /allowDangerouslySkipPermissions/,
    );
    const warnings: string[] = [];
    const messages = await runQuery(
      "write the file",
      harness.options({
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
        disallowedTools: ["Write(out.txt)"],
        stderr: (line) => warnings.push(line),
        // A newer Agent SDK's option (R-K1: the ones forkloop knows are acted on or refused).
        ...({ newerAgentSdkOption: true } as object),
        persistSession: true,
        betas: [],
        hooks: { Notification: [{ hooks: [async () => ({})] }] },
      }),
    );
    expect(resultOf(messages).permission_denials).toMatchObject([{ tool_name: "Write" }]);
    expect(existsSync(join(harness.dir, "out.txt"))).toBe(false);
    expect(warnings.filter((line) => line.includes("ignoring options"))).toEqual([
      "forkloop: ignoring options it does not support yet: newerAgentSdkOption\n",
    ]);
    expect(warnings.filter((line) => line.includes("ignoring hooks"))).toEqual([
      expect.stringMatching(
        /^forkloop: ignoring hooks for events it does not fire: Notification \(it fires PreToolUse, /,
      ),
    ]);
  });

  it("R-K1, R-K2: supportedModels, supportedCommands, setModel (checked with the API, echoed) for the next turn; setPermissionMode's status", async () => {
    const input = promptStream();
    const run = query({ prompt: input.stream, options: harness.options() });
    expect((await run.supportedModels()).map((model) => model.value)).toContain("claude-sonnet-4-6");
    expect((await run.supportedCommands()).map((command) => command.name)).toEqual(["compact"]);
    input.push("hello");
    const inits: string[] = [];
    const echoes: unknown[] = [];
    const requestsBefore = harness.sim.requests().length;
    for await (const message of run) {
      if (message.type === "system" && message.subtype === "init") inits.push(message.model);
      if (message.type === "system" && message.subtype === "status") echoes.push(message.permissionMode);
      if (message.type === "user" && "isReplay" in message) echoes.push(message.message.content);
      if (message.type === "result" && inits.length === 1) {
        // A model the API does not serve is refused by name and the session keeps its model.
        await expect(run.setModel("claude-no-such-model")).rejects.toThrow(
          /setModel\("claude-no-such-model"\) refused: .*HTTP 404/,
        );
        await run.setPermissionMode("acceptEdits");
        await run.setModel("claude-haiku-4-5");
        input.push("again");
      } else if (message.type === "result") input.end();
    }
    // R-X2: Claude Code's default model; the session's adaptive thinking follows onto Haiku 4.5 as a budget.
    expect(inits).toEqual([DEFAULT_MODEL, "claude-haiku-4-5"]);
    // As the Agent SDK yields them: the new mode as a status, the switch as /model's echoed output.
    expect(echoes).toEqual([
      "acceptEdits",
      "<local-command-stdout>Set model to `claude-haiku-4-5`</local-command-stdout>",
    ]);
    // Each switch asked the API once: one token, no tools, the model named.
    const probes = harness.sim
      .requests()
      .slice(requestsBefore)
      .map(
        (request) => JSON.parse(request.rawBody) as { model: string; max_tokens: number; tools?: unknown[] },
      )
      .filter((body) => body.max_tokens === 1 && (body.tools ?? []).length === 0);
    expect(probes.map((body) => body.model)).toEqual(["claude-no-such-model", "claude-haiku-4-5"]);
  });

  it("R-K1: concurrent sessions share one runtime (one endpoint, worker pool and API client), released when the last ends", async () => {
    const runtimes = new RuntimeRegistry();
    const results = await Promise.all(
      Array.from({ length: 4 }, () =>
        collectMessages(
          query({
            prompt: "review twice",
            options: harness.options({ agents: { reviewer: { description: "r", prompt: "p" } } }),
            runtimes,
          }),
        ),
      ),
    );
    expect(results.map((messages) => resultOf(messages).subtype)).toEqual([
      "success",
      "success",
      "success",
      "success",
    ]);
    expect(results.map((messages) => resultOf(messages).subagentUsage.length)).toEqual([2, 2, 2, 2]);
    expect(runtimes.started).toBe(1);
    // Released: the next query starts a new one.
    await collectMessages(query({ prompt: "hello", options: harness.options(), runtimes }));
    expect(runtimes.started).toBe(2);
  });

  it("R-K1, R-V2: the shared pool starts no thread for a query that never forks; a query that forks starts it as its reply begins the call, and its forks use it", async () => {
    const runtimes = new RuntimeRegistry();
    const held = await runtimes.acquire(harness.options().env ?? {}, () => {});
    try {
      expect(held.pool.stats().threads).toBe(0);
      await collectMessages(query({ prompt: "hello", options: harness.options(), runtimes }));
      expect(held.pool.stats().threads).toBe(0);
      const forked = await collectMessages(
        query({
          prompt: "review twice",
          options: harness.options({ agents: { reviewer: { description: "r", prompt: "p" } } }),
          runtimes,
        }),
      );
      expect(resultOf(forked).subagentUsage).toHaveLength(2);
      expect(held.pool.stats().threads).toBeGreaterThan(0);
      expect(runtimes.started).toBe(1);
    } finally {
      await held.release();
    }
  });

  it("R-V2: warmForkThread starts the shared pool's thread as the session starts, though the query never forks", async () => {
    const runtimes = new RuntimeRegistry();
    const held = await runtimes.acquire(harness.options().env ?? {}, () => {});
    try {
      await collectMessages(
        query({ prompt: "hello", options: harness.options({ warmForkThread: true }), runtimes }),
      );
      expect(held.pool.stats().threads).toBe(1);
    } finally {
      await held.release();
    }
  });

  it("R-K1: interrupt() while input waits is a submit-interrupt (R-L16): no interrupt notice, the waiting message runs next", async () => {
    harness.sim.clearRequests();
    const input = promptStream();
    const run = query({ prompt: input.stream, options: harness.options({ allowedTools: ["Bash"] }) });
    input.push("sleep 20");
    const messages: SDKMessage[] = [];
    let interrupted = false;
    for await (const message of run) {
      messages.push(message);
      const toolUse =
        message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use");
      if (toolUse && !interrupted) {
        interrupted = true;
        input.push("next please");
        await new Promise((resolve) => setTimeout(resolve, 50));
        await run.interrupt();
      }
      if (message.type === "result" && messages.filter((m) => m.type === "result").length === 2) input.end();
    }
    const results = messages.filter((message): message is SDKResultMessage => message.type === "result");
    expect(results.map((result) => result.subtype)).toEqual(["error_during_execution", "success"]);
    expect(JSON.stringify(messages.filter((message) => message.type === "user"))).not.toContain(
      "interrupted by user",
    );
    expect(harness.sim.requests().some((record) => record.rawBody.includes("next please"))).toBe(true);
  });

  it("R-K2, R-X3: the tools option as a list is the whole tool set: Agent, SendMessage and Skill only when named, as the Agent SDK's", async () => {
    const offered = async (tools: string[]) => {
      const before = harness.sim.requests().length;
      const messages = await runQuery("hello", harness.options({ tools }));
      const request = harness.sim.requests()[before];
      const sent = (JSON.parse(request?.rawBody ?? "{}").tools ?? []) as { name: string }[];
      const init = (messages[0] as { tools: string[] }).tools;
      return { init: [...init].sort(), sent: sent.map((tool) => tool.name).sort() };
    };
    const readOnly = await offered(["Read", "Grep"]);
    expect(readOnly.init).toEqual(["Grep", "Read"]);
    expect(readOnly.sent).toEqual(["Grep", "Read"]);
    // Naming Agent offers it, without SendMessage unless that is named too (Claude Code's --tools).
    expect((await offered(["Read", "Agent"])).sent).toEqual(["Agent", "Read"]);
    expect((await offered(["Read", "Task", "SendMessage"])).sent).toEqual(["Agent", "Read", "SendMessage"]);
  });

  it("R-K1: settingSources picks the settings files: [] reads none, ['project'] reads the project's", async () => {
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(join(harness.dir, ".claude"), { recursive: true });
    writeFileSync(
      join(harness.dir, ".claude", "settings.json"),
      JSON.stringify({ permissions: { deny: ["Write"] } }),
    );
    try {
      const tools = async (settingSources: ("user" | "project" | "local")[]) => {
        const messages = await runQuery("hello", harness.options({ settingSources }));
        return (messages[0] as { tools: string[] }).tools;
      };
      expect(await tools([])).toContain("Write");
      expect(await tools(["project"])).not.toContain("Write");
      expect(await tools(["local"])).toContain("Write");
    } finally {
      const { rmSync } = await import("node:fs");
      rmSync(join(harness.dir, ".claude"), { recursive: true, force: true });
    }
  });
});
