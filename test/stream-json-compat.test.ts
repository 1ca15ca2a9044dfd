import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startCliInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";

/**
 * R-X1: `forkloop run --output-format stream-json` lines against Claude Code's headless
 * output, written from what Claude Code prints (shared/reference/claude-code-wire.md) and the
 * Agent SDK's declarations of those messages (SDKSystemMessage, SDKAssistantMessage,
 * SDKUserMessage, SDKResultMessage, SDKAPIRetryMessage, SDKTask*Message), not from forkloop's own
 * schemas. Every object is strict: a field Claude Code prints must be there with its type, and
 * anything else must be one of forkloop's few declared extensions (`EXTENSIONS`), so an
 * undeclared field fails too.
 */
const id = z.uuid();
const common = { session_id: id, uuid: id };
const count = z.number().int().nonnegative();

/** forkloop's own fields, each documented in packages/sdk/src/stream-json.ts. */
const EXTENSIONS = {
  init: { simulated: z.boolean() },
  apiRetry: { error_message: z.string() },
  result: {
    // Absent on a local command's result (`/compact`: no turn ran), as Claude Code has none there.
    terminal_reason: z.string().optional(),
    subagentUsage: z.array(z.looseObject({ agentId: z.string() })),
    cacheReadShare: z.number(),
  },
  taskStarted: { task_type: z.string() },
};

const apiMessage = z.object({
  id: z.string(),
  type: z.literal("message"),
  role: z.literal("assistant"),
  model: z.string(),
  content: z.array(z.looseObject({ type: z.string() })).length(1),
  stop_reason: z.string().nullable(),
  stop_sequence: z.string().nullable(),
  usage: z.looseObject({ input_tokens: count, output_tokens: count }),
  // Always there, as in Claude Code's lines: the API's, or null.
  context_management: z.looseObject({}).nullable(),
});

const init = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("init"),
  ...common,
  cwd: z.string(),
  tools: z.array(z.string()),
  mcp_servers: z.array(z.strictObject({ name: z.string(), status: z.string() })),
  model: z.string(),
  permissionMode: z.enum(["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk", "auto"]),
  slash_commands: z.array(z.string()),
  apiKeySource: z.string(),
  output_style: z.string(),
  agents: z.array(z.string()),
  skills: z.array(z.string()),
  plugins: z.array(z.strictObject({ name: z.string(), path: z.string() })),
  /** Claude Code prints its version; forkloop its own release. */
  claude_code_version: z.string().regex(/^\d+\.\d+\.\d+/),
  original_cwd: z.string(),
  additional_directories: z.array(z.string()),
  /** Whether Bash runs in the sandbox, as Claude Code's says of its shell commands. */
  sandbox_enabled: z.boolean(),
  ...EXTENSIONS.init,
});

/** A sub-agent's lines say whose they are, as the Agent SDK's do. */
const subAgentFields = {
  agent_id: z.string().min(1).optional(),
  subagent_type: z.string().min(1).optional(),
  task_description: z.string().optional(),
};

const assistant = z.strictObject({
  type: z.literal("assistant"),
  ...common,
  message: apiMessage,
  parent_tool_use_id: z.string().nullable(),
  /** The response's request-id (a synthetic API-error reply has none). */
  request_id: z.string().min(1).optional(),
  /**
   * A synthetic API-error reply says so, with its kind, and the status and the API's error type
   * when a response came; a reply over the output cap names Claude Code's api_error and its cut.
   */
  is_api_error_message: z.literal(true).optional(),
  error: z.enum(["authentication_failed", "rate_limit", "max_output_tokens", "unknown"]).optional(),
  api_error_status: z.number().int().nullable().optional(),
  api_error_type: z.string().optional(),
  api_error: z.literal("max_output_tokens").optional(),
  api_error_params: z.strictObject({ cut: z.literal("output_limit") }).optional(),
  timestamp: z.iso.datetime(),
  ...subAgentFields,
});

const toolResultBlock = z.strictObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string(),
  content: z.union([z.string(), z.array(z.looseObject({ type: z.string() }))]),
  is_error: z.boolean().optional(),
});
const user = z.strictObject({
  type: z.literal("user"),
  ...common,
  // An array of blocks (the interrupt notice too); a bare string only on /compact's two lines
  // (the summary and the command's output), as Claude Code 2.1.333 prints them.
  message: z.strictObject({
    role: z.literal("user"),
    content: z.union([
      z.string(),
      z.array(z.union([toolResultBlock, z.strictObject({ type: z.literal("text"), text: z.string() })])),
    ]),
  }),
  parent_tool_use_id: z.string().nullable(),
  isSynthetic: z.boolean().optional(),
  // /compact's lines: the summary says false; the command's output is a replay naming the command.
  isReplay: z.boolean().optional(),
  local_command_run: z.strictObject({ command: z.string(), args: z.string() }).optional(),
  tool_use_result: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
  // What decided each call (R-K2), as Claude Code 2.1.332 prints it beside a tool result.
  tool_result_meta: z
    .array(
      z.strictObject({
        id: z.string(),
        non_execution_kind: z.enum(["permission-rule", "user-rejected"]).optional(),
        input_changed: z.literal(true).optional(),
        permission_decision: z
          .strictObject({
            decision: z.enum(["accept", "reject"]),
            source: z.enum(["config", "hook", "user_temporary", "user_permanent", "user_reject"]),
            reason_type: z.enum(["rule", "mode", "subcommandResults", "hook", "other"]).optional(),
          })
          .optional(),
      }),
    )
    .optional(),
  timestamp: z.iso.datetime(),
  ...subAgentFields,
});

const streamEvent = z.strictObject({
  type: z.literal("stream_event"),
  ...common,
  event: z.looseObject({ type: z.string() }),
  parent_tool_use_id: z.string().nullable(),
  // The API message the event belongs to; message_start's time to first token.
  api_message_id: z.string().optional(),
  ttft_ms: z.number().nonnegative().optional(),
  // message_start's: the thinking display the request asked for.
  thinking_display: z.string().optional(),
});

// With partial messages, each request is announced before its stream (the Agent SDK's status);
// a /compact is framed by compacting and null statuses.
const status = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("status"),
  ...common,
  status: z.enum(["requesting", "compacting"]).nullable(),
  permissionMode: z.string().optional(),
  // The null status that ends a /compact says whether it worked.
  compact_result: z.enum(["success", "failed"]).optional(),
});

const apiRetry = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("api_retry"),
  ...common,
  attempt: z.number().int().positive(),
  max_retries: count,
  retry_delay_ms: z.number().nonnegative(),
  error_status: z.number().int().nullable(),
  error: z.enum([
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "overloaded",
    "invalid_request",
    "model_not_found",
    "server_error",
    "unknown",
  ]),
  ...EXTENSIONS.apiRetry,
});

const compactBoundary = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("compact_boundary"),
  ...common,
  compact_metadata: z.strictObject({
    trigger: z.enum(["manual", "auto"]),
    pre_tokens: count,
    post_tokens: count,
    cumulative_dropped_tokens: z.number().int().optional(),
    // A /compact's, with the last message before it (logical_parent_uuid).
    duration_ms: count.optional(),
  }),
  logical_parent_uuid: id.optional(),
});

const taskUsage = z.strictObject({
  total_tokens: count,
  tool_uses: count,
  duration_ms: z.number().nonnegative(),
});
const task = {
  ...common,
  task_id: z.string(),
  run_id: z.string().min(1),
  tool_use_id: z.string().optional(),
  subagent_type: z.string().optional(),
};
const taskStarted = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("task_started"),
  ...task,
  description: z.string(),
  is_backgrounded: z.boolean(),
  spawn_depth: z.number().int().positive(),
  prompt: z.string().optional(),
  // A sub-agent's own task (Claude Code 2.1.332: its nested sub-agents and background commands).
  parent_task_id: z.string().optional(),
  owned_by_subagent: z.literal(true).optional(),
  ...EXTENSIONS.taskStarted,
});
const taskUpdated = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("task_updated"),
  ...common,
  task_id: z.string(),
  run_id: z.string().min(1),
  patch: z.strictObject({
    status: z.enum(["pending", "running", "completed", "failed", "killed", "paused"]).optional(),
    end_time: z.number().int().positive().optional(),
  }),
});
const taskProgress = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("task_progress"),
  ...task,
  description: z.string(),
  usage: taskUsage,
  last_tool_name: z.string().optional(),
});
const taskNotification = z.strictObject({
  type: z.literal("system"),
  subtype: z.literal("task_notification"),
  ...task,
  status: z.enum(["completed", "failed", "stopped"]),
  output_file: z.string(),
  summary: z.string(),
  owned_by_subagent: z.literal(true).optional(),
  usage: taskUsage,
});

const modelUsage = z.strictObject({
  inputTokens: count,
  outputTokens: count,
  cacheReadInputTokens: count,
  cacheCreationInputTokens: count,
  webSearchRequests: count,
  costUSD: z.number().nonnegative(),
  contextWindow: count,
  maxOutputTokens: count,
  thinkingTokens: count,
  cacheCreationEphemeral5mInputTokens: count,
  cacheCreationEphemeral1hInputTokens: count,
  canonicalModel: z.string(),
  provider: z.string(),
  costBasis: z.string(),
});

const result = z
  .strictObject({
    type: z.literal("result"),
    subtype: z.enum(["success", "error_max_turns", "error_during_execution", "error_max_budget_usd"]),
    ...common,
    is_error: z.boolean(),
    duration_ms: z.number().nonnegative(),
    duration_api_ms: z.number().nonnegative(),
    num_turns: count,
    // A success's text; an error result has none (its errors say what went wrong), as Claude Code's.
    result: z.string().optional(),
    stop_reason: z.string().nullable(),
    total_cost_usd: z.number().nonnegative(),
    usage: z.strictObject({
      input_tokens: count,
      output_tokens: count,
      cache_creation_input_tokens: count,
      cache_read_input_tokens: count,
      service_tier: z.string(),
      cache_creation: z.strictObject({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }),
      server_tool_use: z.strictObject({ web_search_requests: count, web_fetch_requests: count }),
      output_tokens_details: z.strictObject({ thinking_tokens: count }),
      inference_geo: z.string(),
      iterations: z.array(z.unknown()),
      speed: z.string(),
      fallback_credit: z.unknown().nullable(),
    }),
    modelUsage: z.record(z.string(), modelUsage),
    model_usage_since_last_result: z.record(z.string(), modelUsage),
    result_index: count,
    begun_message_ids: z.array(z.string()).optional(),
    subagent_stats: z
      .strictObject({
        spawned: count,
        requested: z.strictObject({ background: count, foreground: count, unset: count }),
        started_in_background: count,
        max_depth: count,
        spawned_by_subagents: count,
        completed: count,
        failed: count,
        killed: z.strictObject({ parent: count, user: count, system: count }),
        refused: z.strictObject({ depth_limit: count, concurrency_limit: count, budget: count }),
        by_type: z.record(z.string(), count),
      })
      .optional(),
    permission_denials: z.array(
      z.strictObject({
        tool_name: z.string(),
        tool_use_id: z.string(),
        tool_input: z.record(z.string(), z.unknown()),
      }),
    ),
    // Only error results say what went wrong.
    errors: z.array(z.string()).optional(),
    api_error_status: z.number().int().nullable().optional(),
    // A success that ended on an API error (is_error): the API's error type, or Claude Code's
    // name for a reply over the output cap.
    api_error_type: z.string().optional(),
    api_error: z.literal("max_output_tokens").optional(),
    ttft_ms: z.number().nonnegative().optional(),
    // The built-in command a result without a turn ran (`/compact`), as Claude Code's.
    local_command: z.string().optional(),
    ...EXTENSIONS.result,
  })
  .superRefine((line, context) => {
    // Claude Code's success carries result and api_error_status (a local command's only result,
    // and no terminal_reason); its error results neither, nor ttft_ms.
    const success = line.subtype === "success";
    const local = line.local_command !== undefined;
    if ((line.result !== undefined) !== success)
      context.addIssue({ code: "custom", message: `result on ${line.subtype}` });
    if ((line.api_error_status !== undefined) !== (success && !local))
      context.addIssue({ code: "custom", message: `api_error_status on ${line.subtype}` });
    if ((line.terminal_reason !== undefined) === local)
      context.addIssue({
        code: "custom",
        message: "terminal_reason and local_command together (or neither)",
      });
    if (!success && line.ttft_ms !== undefined)
      context.addIssue({ code: "custom", message: "ttft_ms on an error result" });
    if ((line.errors !== undefined) === success)
      context.addIssue({ code: "custom", message: `errors on ${line.subtype}` });
  });

/** Claude Code's line kinds (`type`, or `type/subtype` for system lines) and their schemas. */
const LINES: Record<string, z.ZodType> = {
  "system/init": init,
  assistant,
  user,
  stream_event: streamEvent,
  "system/status": status,
  "system/api_retry": apiRetry,
  "system/compact_boundary": compactBoundary,
  "system/task_started": taskStarted,
  "system/task_progress": taskProgress,
  "system/task_updated": taskUpdated,
  "system/task_notification": taskNotification,
  result,
};

/** The name of the line kind, for the coverage check. */
const kindOf = (line: Record<string, unknown>) =>
  line.type === "system" ? `system/${line.subtype}` : String(line.type);

let dir: string;
const runs: Record<string, Record<string, unknown>[]> = {};
const parse = (stdout: string) =>
  stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-compat-"));
  for (const name of ["a", "b"]) await writeFile(join(dir, `${name}.txt`), `${name} alpha beta\n`);
  await writeFile(join(dir, "notes.md"), "# Notes\nwire format\n");
  // Big enough that /compact has history to cut.
  const big = Array.from({ length: 300 }, (_, i) => `line ${i}: alpha beta gamma delta omega`);
  await writeFile(join(dir, "big.md"), `# Big\n${big.join("\n")}\n`);
  const stream = ["--output-format", "stream-json"];
  const [forks, limited, refused, long] = await Promise.all([
    // The built-in policy forks one sub-agent per matched file; the first request is retried (529).
    runCliInProcess(["run", "Summarize *.txt", ...stream, "--include-partial-messages"], {
      cwd: dir,
      env: { FORKLOOP_SIM_FAULTS: "529@1" },
    }),
    runCliInProcess(["run", "Summarize notes.md", ...stream, "--max-turns", "1"], { cwd: dir }),
    // A 400 is not retried: the turn ends on the API error.
    runCliInProcess(["run", "Summarize notes.md", ...stream], {
      cwd: dir,
      env: { FORKLOOP_SIM_FAULTS: "400@1" },
    }),
    runCliInProcess(["run", "Summarize big.md", ...stream], { cwd: dir }),
  ]);
  runs.forks = parse(forks.stdout);
  runs.limited = parse(limited.stdout);
  runs.refused = parse(refused.stdout);
  runs.long = parse(long.stdout);
  const sessionId = String(runs.long.at(-1)?.session_id);
  const [compacted, interrupted] = await Promise.all([
    runCliInProcess(["run", "--resume", sessionId, "/compact", ...stream], { cwd: dir }),
    (async () => {
      const run = startCliInProcess(["run", "Summarize notes.md", ...stream], {
        cwd: dir,
        env: { FORKLOOP_SIM_LATENCY: "realistic" },
      });
      await run.waitFor(run.stdout, (text) => text.includes('"subtype":"init"'));
      // The first Ctrl+C's stop (test/cli-run.test.ts sends the real SIGINT to the binary).
      return run.stop();
    })(),
  ]);
  runs.compacted = parse(compacted.stdout);
  runs.interrupted = parse(interrupted.stdout);
}, 180_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("R-X1: stream-json lines are Claude Code's lines", () => {
  it("every line of six runs (sub-agents with a retry and partial messages, max turns, an API error, a long read, /compact, Ctrl+C) validates strictly", () => {
    for (const [name, lines] of Object.entries(runs)) {
      for (const line of lines) {
        const schema = LINES[kindOf(line)];
        expect(schema, `${name}: a line kind Claude Code does not print: ${kindOf(line)}`).toBeDefined();
        const parsed = schema?.safeParse(line);
        expect(
          parsed?.success,
          `${name}: ${JSON.stringify(line).slice(0, 300)}\n${parsed?.error?.message}`,
        ).toBe(true);
      }
    }
    // Every kind of line was seen, so every schema above was exercised.
    const kinds = new Set(Object.values(runs).flatMap((lines) => lines.map(kindOf)));
    expect([...kinds].sort()).toEqual(Object.keys(LINES).sort());
  });

  it("a sub-agent's messages stream with parent_tool_use_id = the Agent tool_use that started it", () => {
    const lines = runs.forks ?? [];
    const agentCalls = lines
      .filter((line) => line.type === "assistant" && line.parent_tool_use_id === null)
      .flatMap(
        (line) => (line.message as { content: { type: string; name?: string; id?: string }[] }).content,
      )
      .filter((block) => block.type === "tool_use" && block.name === "Agent")
      .map((block) => block.id);
    expect(agentCalls.length).toBeGreaterThanOrEqual(2);
    for (const callId of agentCalls) {
      expect(lines.some((line) => line.type === "assistant" && line.parent_tool_use_id === callId)).toBe(
        true,
      );
      const started = lines.find((line) => line.subtype === "task_started" && line.tool_use_id === callId);
      expect(started).toBeDefined();
    }
    // One session id, a UUID, on every line.
    expect(new Set(lines.map((line) => line.session_id)).size).toBe(1);
  });

  it("R-K2: the main loop's tool results carry tool_use_result, a sub-agent's do not (as Claude Code's); the interrupt notice is a content array; error results carry no result or status; a turn that ended on an API error is a success with is_error, its status on the result and its synthetic message", () => {
    const toolResults = (runs.forks ?? []).filter(
      (line) =>
        line.type === "user" &&
        (line.message as { content: { type: string }[] }).content.some(
          (block) => block.type === "tool_result",
        ),
    );
    const mainLoop = toolResults.filter((line) => line.parent_tool_use_id === null);
    const subAgents = toolResults.filter((line) => line.parent_tool_use_id !== null);
    expect(mainLoop.length).toBeGreaterThan(0);
    expect(subAgents.length).toBeGreaterThan(0);
    for (const line of mainLoop) expect(line.tool_use_result).toBeDefined();
    for (const line of subAgents) expect(line).not.toHaveProperty("tool_use_result");
    const notice = (runs.interrupted ?? []).find(
      (line) => line.type === "user" && JSON.stringify(line.message).includes("interrupted"),
    );
    expect(notice).toBeDefined();
    expect(runs.limited?.at(-1)).toMatchObject({
      subtype: "error_max_turns",
      errors: ["Reached maximum number of turns (1)"],
    });
    expect(runs.limited?.at(-1)).not.toHaveProperty("result");
    expect(runs.limited?.at(-1)).not.toHaveProperty("api_error_status");
    const refusal = runs.refused?.findLast((line) => line.type === "assistant");
    expect(refusal).toMatchObject({
      is_api_error_message: true,
      api_error_status: 400,
      error: "unknown",
      message: { model: "<synthetic>", stop_reason: "stop_sequence", stop_sequence: "" },
    });
    expect(runs.refused?.at(-1)).toMatchObject({
      subtype: "success",
      is_error: true,
      result: expect.stringMatching(/^API Error: 400 /),
      api_error_status: 400,
      terminal_reason: "api_error",
    });
  });

  it("replies carry the response's request_id, retries their status and kind, results the time to first token", () => {
    const lines = runs.forks ?? [];
    // A sub-agent's replies too (R-K2): its blocks are the API message as the worker received it.
    const replies = lines.filter((line) => line.type === "assistant");
    expect(replies.some((line) => line.parent_tool_use_id !== null)).toBe(true);
    // The simulator's request-id header, as the API's: every reply names the request it answered.
    for (const line of replies) expect(line.request_id).toMatch(/^req_/);
    // …and the message id the API gave it (the simulator's), not one made up from the task.
    for (const line of replies) expect((line.message as { id: string }).id).toMatch(/^msg_sim_/);
    expect(lines.find((line) => line.subtype === "api_retry")).toMatchObject({
      error_status: 529,
      error: "overloaded",
    });
    expect(lines.at(-1)?.ttft_ms).toBeGreaterThan(0);
    expect(runs.forks?.[0]).toMatchObject({
      subtype: "init",
      plugins: [],
      claude_code_version: expect.any(String),
    });
  });
});
