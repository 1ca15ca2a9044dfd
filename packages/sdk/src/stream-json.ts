import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";

/**
 * Every line `forkloop run --output-format stream-json` prints, as zod schemas. The shapes follow
 * Claude Code's headless output (shared/reference/claude-code-wire.md) so its consumers can read
 * forkloop's; forkloop's own additions are marked. Tests validate every printed line against
 * `streamJsonLineSchema`. Each is built at its first use (`lazySchema`, R-V2): a program that
 * only runs queries never validates a line, and building them all cost a fifth of the import.
 */

const base = () => ({ session_id: z.string(), uuid: z.string() });

const count = lazySchema(() => z.number().int().nonnegative());

/** A result's `usage`, with the fields Claude Code prints beside the four token counts. */
const usageSchema = lazySchema(() =>
  z.object({
    input_tokens: count,
    output_tokens: count,
    cache_creation_input_tokens: count,
    cache_read_input_tokens: count,
    /** Cache writes by lifetime (forkloop writes 5-minute entries only). */
    cache_creation: z.object({ ephemeral_5m_input_tokens: count, ephemeral_1h_input_tokens: count }),
    server_tool_use: z.object({ web_search_requests: count, web_fetch_requests: count }),
    service_tier: z.string(),
    /** Thinking tokens are not reported apart by the API: 0, as Claude Code reports them. */
    output_tokens_details: z.object({ thinking_tokens: count }),
    inference_geo: z.string(),
    iterations: z.array(z.unknown()),
    speed: z.string(),
    fallback_credit: z.unknown().nullable(),
  }),
);

/**
 * Claude Code's `error` of an `api_retry` and of an assistant message (the Agent SDK's
 * `SDKAssistantMessageError`), from the failed response's HTTP status.
 */
export const apiErrorKindSchema = lazySchema(() =>
  z.enum([
    "authentication_failed",
    "billing_error",
    "rate_limit",
    "overloaded",
    "invalid_request",
    "model_not_found",
    "server_error",
    "unknown",
  ]),
);

/** A content block as the API returns it; only the discriminant is pinned (the API adds kinds). */
const contentBlockSchema = lazySchema(() => z.looseObject({ type: z.string() }));

export const systemInitLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("init"),
    ...base(),
    cwd: z.string(),
    tools: z.array(z.string()),
    model: z.string(),
    permissionMode: z.string(),
    /** R-X2: "apiKeyHelper" when the settings' apiKeyHelper printed the key, as Claude Code says it. */
    apiKeySource: z.enum(["ANTHROPIC_API_KEY", "apiKeyHelper", "none"]),
    /** Claude Code prints its own version here; forkloop prints the forkloop release (`forkloop --version`). */
    claude_code_version: z.string(),
    /** `source`: where the server came from (`sdk`, `dynamic`, or a settings scope), as Claude Code says it. */
    mcp_servers: z.array(z.object({ name: z.string(), status: z.string(), source: z.string().optional() })),
    slash_commands: z.array(z.string()),
    output_style: z.string(),
    /** The sub-agent types the Agent tool can start. */
    agents: z.array(z.string()),
    /** The skills the Skill tool can run. */
    skills: z.array(z.string()),
    /** forkloop loads no plugins: always empty. */
    plugins: z.array(z.object({ name: z.string(), path: z.string() })),
    /** The directory the session started in (forkloop's sessions do not change it: `cwd`). */
    original_cwd: z.string(),
    /** Directories beside `cwd` the tools may use (settings' and the option's additionalDirectories). */
    additional_directories: z.array(z.string()),
    /**
     * Whether this run's Bash runs in forkloop's sandbox (R-S6), as Claude Code says whether its
     * shell commands run in its own. There is no `memory_paths`: forkloop keeps no auto-memory store.
     */
    sandbox_enabled: z.boolean(),
    /** forkloop: true when replies come from the simulator, not a real model. */
    simulated: z.boolean(),
  }),
);

/** On a sub-agent's messages (with parent_tool_use_id), as the Agent SDK sets them. */
const subAgentFields = () => ({
  /** The sub-agent's id (task_started's task_id). */
  agent_id: z.string().optional(),
  /** Its agent type, for an Agent tool's sub-agent. */
  subagent_type: z.string().optional(),
  /** The Agent tool's description of its task. */
  task_description: z.string().optional(),
});

export const assistantLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("assistant"),
    ...base(),
    /** One content block per line, like Claude Code; blocks of one reply share `message.id`. */
    message: z.looseObject({
      id: z.string(),
      type: z.literal("message"),
      role: z.literal("assistant"),
      model: z.string(),
      content: z.array(contentBlockSchema),
      stop_reason: z.string().nullable(),
      usage: z.looseObject({ input_tokens: z.number(), output_tokens: z.number() }),
    }),
    parent_tool_use_id: z.string().nullable(),
    /** The API response's `request-id` (absent when no response came, e.g. an API error message). */
    request_id: z.string().optional(),
    /**
     * The message stands for an API error (the loop wrote it, model `<synthetic>`): its kind, its
     * HTTP status and the API's error type when a response came; for a reply that stayed over the
     * output cap, Claude Code's `api_error` name and what cut it.
     */
    is_api_error_message: z.boolean().optional(),
    error: z
      .enum(["authentication_failed", "rate_limit", "model_not_found", "max_output_tokens", "unknown"])
      .optional(),
    api_error_status: z.number().int().nullable().optional(),
    api_error_type: z.string().optional(),
    api_error: z.literal("max_output_tokens").optional(),
    api_error_params: z.object({ cut: z.literal("output_limit") }).optional(),
    ...subAgentFields(),
    /** How a client shows the line's tool calls (an MCP tool's title and server), R-K2. */
    tool_use_meta: z
      .array(
        z.object({
          id: z.string(),
          display_name: z.string(),
          server_display_name: z.string().optional(),
          tool_name: z.string().optional(),
        }),
      )
      .optional(),
    /** ISO-8601 time the message was created. */
    timestamp: z.string().optional(),
  }),
);

/**
 * How a tool call's permission check ended, beside its result (R-K2: Claude Code's
 * `tool_result_meta`, one entry per tool_result): the decision and who made it, why a refused
 * call did not run, and whether its input was changed before it ran.
 */
const toolResultMetaSchema = lazySchema(() =>
  z.object({
    id: z.string(),
    non_execution_kind: z.enum(["permission-rule", "user-rejected"]).optional(),
    input_changed: z.literal(true).optional(),
    permission_decision: z
      .object({
        decision: z.enum(["accept", "reject"]),
        source: z.enum(["config", "hook", "user_temporary", "user_permanent", "user_reject"]),
        reason_type: z.enum(["rule", "mode", "subcommandResults", "hook", "other"]).optional(),
      })
      .optional(),
  }),
);

export const userLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("user"),
    ...base(),
    /** As Claude Code prints it: content is always blocks (the interrupt notice too), one tool_result a line. */
    message: z.object({
      role: z.literal("user"),
      content: z.union([z.string(), z.array(contentBlockSchema)]),
    }),
    parent_tool_use_id: z.string().nullable(),
    /** True for messages the runtime wrote (tool results, interrupt notices), not the user. */
    isSynthetic: z.boolean().optional(),
    /** The tool's output on a tool_result line: its text (forkloop tools have no separate structured output). */
    tool_use_result: z.unknown().optional(),
    tool_result_meta: z.array(toolResultMetaSchema).optional(),
    /** ISO-8601 time the message was created. */
    timestamp: z.string().optional(),
    /**
     * `--replay-user-messages`: an input message printed back as it was sent; a local command's
     * output (`/compact`'s) is a replay too, and the summary a compaction starts the history with
     * says false, as Claude Code's.
     */
    isReplay: z.boolean().optional(),
    /** The local command whose output this line is (`/compact` and its instructions). */
    local_command_run: z.object({ command: z.string(), args: z.string() }).optional(),
    ...subAgentFields(),
  }),
);

const taskUsageSchema = lazySchema(() =>
  z.object({
    total_tokens: z.number().int().nonnegative(),
    tool_uses: z.number().int().nonnegative(),
    duration_ms: z.number().nonnegative(),
  }),
);

const taskBase = () => ({
  ...base(),
  /** The sub-agent's id (its transcript is `<session>/agents/<task_id>.fltr`). */
  task_id: z.string(),
  /** The Agent/Skill tool_use that started it (absent for compaction and session-memory forks). */
  tool_use_id: z.string().optional(),
  /** This run of the task (a fresh id each start), as the Agent SDK's. */
  run_id: z.string().optional(),
});

/** A sub-agent (fork) or a background command (R-T4, task_type `local_bash`) started. */
export const taskStartedLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("task_started"),
    ...taskBase(),
    description: z.string(),
    subagent_type: z.string().optional(),
    /** True for a sub-agent the model started with run_in_background (R-T5); forkloop's default is the foreground. */
    is_backgrounded: z.boolean().optional(),
    /** 1 for the main agent's sub-agents, 2 for theirs, … */
    spawn_depth: z.number().int().positive().optional(),
    /** A sub-agent's own sub-agent or background command: the task_id of the sub-agent that started it. */
    parent_task_id: z.string().optional(),
    /** True for a sub-agent's own background command (R-X1, as Claude Code's). */
    owned_by_subagent: z.boolean().optional(),
    /**
     * `local_agent` for an Agent tool's sub-agent, `local_bash` for a background command (the Agent
     * SDK's); else the fork's querySource (`skill:<name>`, …).
     */
    task_type: z.string(),
    /** The task as the Agent tool was given it. */
    prompt: z.string().optional(),
  }),
);

/** R-T4, R-T5: the session's running background sub-agents and commands, sent whenever the list changes (as Claude Code's). */
const backgroundTasksChangedLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("background_tasks_changed"),
    tasks: z.array(
      z.object({
        task_id: z.string(),
        run_id: z.string().optional(),
        task_type: z.string(),
        subagent_type: z.string().optional(),
        description: z.string(),
        parent_task_id: z.string().optional(),
      }),
    ),
    session_id: z.string(),
    uuid: z.string(),
  }),
);

/** A sub-agent's reply finished: its running totals. */
export const taskProgressLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("task_progress"),
    ...taskBase(),
    description: z.string(),
    subagent_type: z.string().optional(),
    usage: taskUsageSchema,
    last_tool_name: z.string().optional(),
  }),
);

/** A task's record changed (a sub-agent or background command): it ended (sent just before its task_notification). */
const taskUpdatedLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("task_updated"),
    ...base(),
    task_id: z.string(),
    run_id: z.string().optional(),
    patch: z.object({
      status: z.enum(["pending", "running", "completed", "failed", "killed", "paused"]).optional(),
      /** Epoch ms. */
      end_time: z.number().optional(),
    }),
  }),
);

/** A sub-agent or a background command (R-T4) ended. */
export const taskNotificationLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("task_notification"),
    ...taskBase(),
    status: z.enum(["completed", "failed", "stopped"]),
    /** The sub-agent's transcript file ("" when it keeps none); a background command's output file. */
    output_file: z.string(),
    summary: z.string(),
    /** True for a sub-agent's own background command (R-X1, as Claude Code's). */
    owned_by_subagent: z.boolean().optional(),
    /** Set (true) when the summary is a background sub-agent's report: the notice is how it reaches the parent. */
    summary_is_report: z.boolean().optional(),
    /** A sub-agent's totals; a background command (local_bash) has none, as in Claude Code. */
    usage: taskUsageSchema.optional(),
  }),
);

/** `--include-hook-events`: one settings hook command's run, by `hook_id`. */
const hookRun = () => ({
  ...base(),
  hook_id: z.string(),
  /** The event, and what its matcher was matched against: `PreToolUse:Read`, `SessionStart:startup`, `Stop`. */
  hook_name: z.string(),
  hook_event: z.string(),
});

const hookStartedLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("hook_started"),
    ...hookRun(),
  }),
);

const hookResponseLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("hook_response"),
    ...hookRun(),
    /** stdout then stderr, as one text. */
    output: z.string(),
    stdout: z.string(),
    stderr: z.string(),
    /** Absent when the command never exited (killed at its timeout). */
    exit_code: z.number().int().optional(),
    outcome: z.enum(["success", "error", "cancelled"]),
  }),
);

export const compactBoundaryLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("compact_boundary"),
    ...base(),
    compact_metadata: z.object({
      /** Claude Code's two: a reactive compaction (after the API said prompt-too-long) is `auto` too; the transcript keeps the difference. */
      trigger: z.enum(["auto", "manual"]),
      pre_tokens: z.number().int().nonnegative(),
      post_tokens: z.number().int().nonnegative(),
      /** The session's compactions so far, this one included: what they removed (pre less post tokens). */
      cumulative_dropped_tokens: z.number().int().optional(),
      /** A `/compact`'s: how long it took. */
      duration_ms: z.number().int().nonnegative().optional(),
    }),
    /** A `/compact`'s: the last message before the compaction (what a fork across it follows). */
    logical_parent_uuid: z.string().optional(),
  }),
);

export const apiRetryLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("api_retry"),
    ...base(),
    attempt: z.number().int().positive(),
    max_retries: z.number().int().nonnegative(),
    retry_delay_ms: z.number().nonnegative(),
    /** The failed attempt's HTTP status; null for a connection error. */
    error_status: z.number().int().nullable(),
    error: apiErrorKindSchema,
    /** forkloop: the failure as the API or the connection said it. */
    error_message: z.string(),
    /**
     * forkloop (R-R11): a rate limit whose reset is far away: the run waits until this time (ISO
     * 8601) instead of retrying, and the wait is not counted as an attempt.
     */
    resumes_at: z.string().optional(),
  }),
);

/** forkloop: the primary model stayed overloaded and the loop switched models (R-L8). */
export const modelFallbackLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("model_fallback"),
    ...base(),
    from: z.string(),
    to: z.string(),
  }),
);

/** forkloop: a message printed earlier belongs to a failed attempt; consumers drop it (R-L8). */
export const tombstoneLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("tombstone"),
    ...base(),
    removed_uuid: z.string(),
  }),
);

/**
 * A call refused because nobody could answer its question, announced before its result (the
 * Agent SDK's `permission_denied`; `agent_id` on a sub-agent's call).
 */
const permissionDeniedLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("permission_denied"),
    ...base(),
    tool_name: z.string(),
    tool_use_id: z.string(),
    agent_id: z.string().optional(),
    decision_reason_type: z.string().optional(),
    decision_reason: z.string().optional(),
    message: z.string(),
  }),
);

/** Raw SSE events, only with `--include-partial-messages`. */
export const streamEventLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("stream_event"),
    ...base(),
    event: contentBlockSchema,
    parent_tool_use_id: z.string().nullable(),
    /** The id of the API message the event belongs to (its message_start's). */
    api_message_id: z.string().optional(),
    /** On message_start: the request's time to its first streamed event. */
    ttft_ms: z.number().nonnegative().optional(),
    /** On message_start: the thinking display the request asked for. */
    thinking_display: z.string().optional(),
  }),
);

/**
 * The session's state: with partial messages, `requesting` before each request's stream (R-K2:
 * the Agent SDK's `status`); `null` with `permissionMode` when the permission mode changed;
 * `compacting` as a `/compact` starts and `null` with `compact_result` as it ends.
 */
const statusLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("system"),
    subtype: z.literal("status"),
    ...base(),
    status: z.enum(["requesting", "compacting"]).nullable(),
    permissionMode: z.string().optional(),
    /** On the null status that ends a `/compact`: whether it worked. */
    compact_result: z.enum(["success", "failed"]).optional(),
  }),
);

export const resultSubtypeSchema = lazySchema(() =>
  z.enum([
    "success",
    "error_max_turns",
    "error_during_execution",
    "error_max_budget_usd",
    "error_max_structured_output_retries",
  ]),
);

const tokensAndCost = () => ({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
  cacheReadInputTokens: z.number().int().nonnegative(),
  cacheCreationInputTokens: z.number().int().nonnegative(),
  costUSD: z.number().nonnegative(),
  /** cache reads / (input + cache reads + cache writes); 0 without input. */
  cacheReadShare: z.number().min(0).max(1),
});

/** forkloop: what one sub-agent (fork) cost, which the Agent SDK merges into per-model totals. */
export const subagentUsageSchema = lazySchema(() =>
  z.object({
    agentId: z.string(),
    /** `general-purpose`, a definition's name, `skill:<name>`, `compact`, `session_memory`. */
    agentType: z.string(),
    parentToolUseId: z.string().nullable(),
    model: z.string(),
    status: z.enum(["running", "completed", "failed", "cancelled"]),
    numTurns: z.number().int().nonnegative(),
    durationMs: z.number().nonnegative(),
    ...tokensAndCost(),
  }),
);

/** One model's tokens and cost in a result, with the fields Claude Code adds. */
const modelUsageSchema = lazySchema(() =>
  z.object({
    inputTokens: z.number(),
    outputTokens: z.number(),
    cacheReadInputTokens: z.number(),
    cacheCreationInputTokens: z.number(),
    webSearchRequests: z.number(),
    costUSD: z.number(),
    contextWindow: z.number(),
    maxOutputTokens: z.number(),
    thinkingTokens: z.number(),
    cacheCreationEphemeral5mInputTokens: z.number(),
    cacheCreationEphemeral1hInputTokens: z.number(),
    canonicalModel: z.string(),
    /** `firstParty`: the Messages API (or a compatible server), not Bedrock or Vertex. */
    provider: z.string(),
    costBasis: z.string(),
  }),
);

/** Claude Code's `subagent_stats`: the Agent tool's sub-agents of the session so far. */
const subagentStatsSchema = lazySchema(() =>
  z.object({
    spawned: count,
    /** The Agent call's run_in_background: true, false, or left out. */
    requested: z.object({ background: count, foreground: count, unset: count }),
    started_in_background: count,
    max_depth: count,
    spawned_by_subagents: count,
    completed: count,
    failed: count,
    killed: z.object({ parent: count, user: count, system: count }),
    refused: z.object({ depth_limit: count, concurrency_limit: count, budget: count }),
    by_type: z.record(z.string(), count),
  }),
);

export const resultLineSchema = lazySchema(() =>
  z.object({
    type: z.literal("result"),
    subtype: resultSubtypeSchema,
    ...base(),
    is_error: z.boolean(),
    duration_ms: z.number().nonnegative(),
    duration_api_ms: z.number().nonnegative(),
    num_turns: z.number().int().nonnegative(),
    /** A success's final text (an error result has `errors` instead, as in the Agent SDK). */
    result: z.string().optional(),
    stop_reason: z.string().nullable(),
    total_cost_usd: z.number().nonnegative(),
    usage: usageSchema,
    modelUsage: z.record(z.string(), modelUsageSchema),
    /** The turn's share of `modelUsage`: what was used since the previous result. */
    model_usage_since_last_result: z.record(z.string(), modelUsageSchema),
    /** Results of this query before this one (0 for the first). */
    result_index: count,
    /** With partial messages: the API message ids whose streams began since the previous result. */
    begun_message_ids: z.array(z.string()).optional(),
    /** The session's sub-agents so far, counted as Claude Code counts them. */
    subagent_stats: subagentStatsSchema.optional(),
    /** R-T5: set on the result of a turn that background tasks' notices started, as Claude Code's. */
    origin: z
      .object({ kind: z.literal("task-notification"), producer: z.string(), runId: z.string() })
      .optional(),
    /** A success's: the HTTP status of the API error the turn ended on; null when it did not end on one. */
    api_error_status: z.number().int().nullable().optional(),
    /** A success that ended on an API error (is_error): the API's error type, when a response came. */
    api_error_type: z.string().optional(),
    /** A success that ended on a reply over the output cap: Claude Code's name for it. */
    api_error: z.literal("max_output_tokens").optional(),
    /** Time from the turn's first request to its first streamed event (absent when nothing streamed). */
    ttft_ms: z.number().nonnegative().optional(),
    permission_denials: z.array(
      z.object({
        tool_name: z.string(),
        tool_use_id: z.string(),
        tool_input: z.record(z.string(), z.unknown()),
      }),
    ),
    /**
     * The loop's terminal reason (the Agent SDK's field; R-L6), which the exit code follows; `api_error` for a
     * turn that ended on an API error (the loop's `model_error`, as Claude Code names it),
     * `budget_exhausted` at `maxBudgetUsd`. Absent on a `/compact` result (no turn ran), as
     * Claude Code's local command results.
     */
    terminal_reason: z.string().optional(),
    /** The built-in command a result without a turn ran (`compact`), as Claude Code's. */
    local_command: z.string().optional(),
    /** With `outputFormat`: the final reply, parsed (it is JSON for the schema). */
    structured_output: z.unknown().optional(),
    /** What went wrong, as the Agent SDK's error results (a success has none). */
    errors: z.array(z.string()).optional(),
    /** forkloop: one entry per sub-agent of the session so far; `usage` + these = the modelUsage totals. */
    subagentUsage: z.array(subagentUsageSchema),
    /** forkloop: the whole session's cache reads / (input + cache reads + cache writes). */
    cacheReadShare: z.number().min(0).max(1),
  }),
);

export const streamJsonLineSchema = lazySchema(() =>
  z.union([
    systemInitLineSchema,
    assistantLineSchema,
    userLineSchema,
    compactBoundaryLineSchema,
    apiRetryLineSchema,
    modelFallbackLineSchema,
    tombstoneLineSchema,
    streamEventLineSchema,
    statusLineSchema,
    taskStartedLineSchema,
    taskProgressLineSchema,
    taskUpdatedLineSchema,
    taskNotificationLineSchema,
    backgroundTasksChangedLineSchema,
    hookStartedLineSchema,
    hookResponseLineSchema,
    permissionDeniedLineSchema,
    resultLineSchema,
  ]),
);

export type StreamJsonLine = z.infer<typeof streamJsonLineSchema>;
export type ResultLine = z.infer<typeof resultLineSchema>;
export type SubagentUsage = z.infer<typeof subagentUsageSchema>;
export type SubagentStats = z.infer<typeof subagentStatsSchema>;
