import { randomUUID } from "node:crypto";
import type { ApiMessage } from "@forkloop/loop-core";
import {
  type AgentPool,
  openingEvent,
  type ParentCallbacks,
  type SubAgentEvent,
  type SubAgentHandle,
  type SubAgentResult,
  type SubAgentTask,
} from "@forkloop/orchestrator";
import type { BackgroundShells, BackgroundTaskEvent } from "@forkloop/tools";
import type { SDKBackgroundTasksChangedMessage } from "./agent-sdk-types/other-messages.js";
import type { SDKMessage } from "./messages.js";
import type { SubagentStats, SubagentUsage } from "./stream-json.js";
import { cacheReadShare, oneBlockMessage } from "./stream-json-writer.js";
import { toolActivity } from "./tool-activity.js";
import { toolResultMetaEntry } from "./tool-result-meta.js";

/** What the tracker tells the query about a fork as it starts (SubagentStart hooks). */
export interface ForkStart {
  readonly agentId: string;
  readonly agentType: string;
  readonly toolUseId: string | undefined;
  /** The fork's query source (`agent:<type>`, `compact`, `session_memory`, …). */
  readonly querySource: string;
  /** Its runner fires SubagentStart before its first request (not a continuation or compaction's fork). */
  readonly opensWithSubagentStart: boolean;
}

interface Tracked {
  readonly task: SubAgentTask;
  entry: SubagentUsage;
  readonly started: number;
  toolUses: number;
  /** Its tool calls announced so far (task_progress), by id: one announcement per call. */
  readonly announced: Set<string>;
  tokens: number;
  /** The reply being streamed: its tokens at message_start, counted until it ends. */
  replyTokens: number;
  lastToolName: string | undefined;
  model: string;
  /** Its run's id (task_* messages' run_id): one per start, as the Agent SDK's. */
  readonly runId: string;
  /** How deep it runs: 1 for the main agent's own sub-agents (task_started's spawn_depth). */
  readonly depth: number;
}

/** `agent:explorer` → `explorer`; `skill:x`, `compact`, `session_memory` stay as they are. */
function agentTypeOf(querySource: string): string {
  return querySource.startsWith("agent:") ? querySource.slice("agent:".length) : querySource;
}

/**
 * Every fork of one session goes through `wrap(pool)`: the Agent and Skill tools, compaction
 * and session memory alike. The tracker keeps the per-fork cost ledger the Agent SDK lacks
 * (`result.subagentUsage`) and turns the forks' events into the Agent SDK's messages:
 * `system/task_started`, `task_progress`, `task_notification`, and the sub-agent's own
 * assistant/user messages with `parent_tool_use_id` = the tool_use that started it.
 */
export class SubAgentTracker {
  readonly #sessionId: string;
  readonly #emit: (message: SDKMessage, after?: string) => void;
  readonly #onStart: (start: ForkStart) => Promise<void> | void;
  readonly #toolInput: (toolUseId: string) => Record<string, unknown> | undefined;
  /** The sub-agents' own tool calls' inputs (a nested Agent call's run_in_background and description). */
  readonly #subAgentToolInputs = new Map<string, Record<string, unknown>>();
  /** The background sub-agents and commands running (background_tasks_changed's list), in start order. */
  readonly #background = new Map<string, SDKBackgroundTasksChangedMessage["tasks"][number]>();
  readonly #tracked = new Map<string, Tracked>();
  /** Running forks by id (task_started's task_id), for `stop()`. */
  readonly #handles = new Map<string, SubAgentHandle>();
  readonly #inFlight = new Set<Promise<void>>();
  /** Forks stopTask() cancelled (killed by the user, in subagent_stats). */
  readonly #stopped = new Set<string>();
  readonly #forwardText: boolean;
  readonly #cwd: string;
  /** The sub-agents' own background commands' runs (task run_id), by task id. */
  readonly #subAgentShellRuns = new Map<string, string>();

  constructor(options: {
    sessionId: string;
    /** `after`: the tool_use a message belongs to that names none itself (it follows that call's message). */
    emit: (message: SDKMessage, after?: string) => void;
    /** A fork started (SubagentStart hooks); its first message waits for what this returns. */
    onStart?: (start: ForkStart) => Promise<void> | void;
    /** The input of the tool_use that started a fork (the Agent tool's description, run_in_background). */
    toolInput?: (toolUseId: string) => Record<string, unknown> | undefined;
    /** `forwardSubagentText`: a sub-agent's text and thinking blocks too, its final reply included. */
    forwardText?: boolean;
    /** The session's working directory (a task_progress names a file relative to it). */
    cwd?: string;
  }) {
    this.#sessionId = options.sessionId;
    this.#cwd = options.cwd ?? process.cwd();
    this.#forwardText = options.forwardText === true;
    this.#emit = options.emit;
    this.#onStart = options.onStart ?? (() => {});
    const mainInput = options.toolInput ?? (() => undefined);
    this.#toolInput = (toolUseId) => mainInput(toolUseId) ?? this.#subAgentToolInputs.get(toolUseId);
  }

  /** The session's view of a shared pool: same threads, every run tracked; closing it is a no-op. */
  wrap(pool: AgentPool): AgentPool {
    const track = (task: SubAgentTask, callbacks: ParentCallbacks | undefined): ParentCallbacks => {
      this.#begin(task);
      return {
        ...callbacks,
        onEvent: (event) => {
          callbacks?.onEvent?.(event);
          this.#onEvent(event);
        },
      };
    };
    const settle = (task: SubAgentTask, result: Promise<SubAgentResult>) => {
      const settled = result.then((value) => this.#finish(task.id, value)).catch(() => {});
      // Only a tool's fork reports (task_notification); compaction and session-memory forks run
      // in the background and the turn does not wait for them, nor for a sub-agent the model
      // started in the background (R-T5: the query waits for it after the turn, as for a shell).
      if (task.parent?.toolUseId === undefined || task.background === true) return;
      this.#inFlight.add(settled);
      void settled.finally(() => this.#inFlight.delete(settled));
    };
    return {
      run: (task, callbacks) => {
        const handle = pool.run(task, track(task, callbacks));
        this.#hold(handle);
        settle(task, handle.result);
        return handle;
      },
      runAll: (tasks, callbacks, options) => {
        const handles = pool.runAll(
          tasks,
          // One callbacks object for all: the events name their agent, so one tracker hook serves.
          {
            ...callbacks,
            onEvent: (event) => {
              callbacks?.onEvent?.(event);
              this.#onEvent(event);
            },
          },
          options,
        );
        for (const [index, handle] of handles.entries()) {
          const task = tasks[index];
          if (task === undefined) continue;
          this.#begin(task);
          this.#hold(handle);
          settle(task, handle.result);
        }
        return handles;
      },
      pauseUntil: (epochMs) => pool.pauseUntil(epochMs),
      prewarm: () => pool.prewarm(),
      stats: () => pool.stats(),
      close: async () => {},
    };
  }

  /** Keeps a running fork's handle until it ends, so `stop()` can reach it. */
  #hold(handle: SubAgentHandle): void {
    this.#handles.set(handle.id, handle);
    void handle.result.finally(() => this.#handles.delete(handle.id)).catch(() => {});
  }

  /** Cancels a running fork by its task id (the Agent SDK's `stopTask`); false when none runs by that id. */
  stop(taskId: string): boolean {
    const handle = this.#handles.get(taskId);
    if (handle !== undefined) this.#stopped.add(taskId);
    handle?.cancel("stopped by stopTask()");
    return handle !== undefined;
  }

  /**
   * Waits (at most `ms`) for the tools' forks still running to settle. An interrupted turn answers its
   * Agent calls without waiting for them; their task_notification belongs before the turn's
   * result, which the Agent SDK yields last.
   */
  async settled(ms: number): Promise<void> {
    if (this.#inFlight.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    await Promise.race([Promise.all(this.#inFlight), timeout]);
    clearTimeout(timer);
  }

  /** The ledger so far, in start order (running forks with zeros). */
  entries(): SubagentUsage[] {
    return [...this.#tracked.values()].map((tracked) => ({ ...tracked.entry }));
  }

  /**
   * The Agent tool's sub-agents so far, as Claude Code counts them (`subagent_stats`): forkloop
   * runs every one in the foreground and refuses none; a cancelled one was killed by its parent,
   * or by the user through stopTask().
   */
  stats(): SubagentStats {
    const stats: SubagentStats = {
      spawned: 0,
      requested: { background: 0, foreground: 0, unset: 0 },
      started_in_background: 0,
      max_depth: 0,
      spawned_by_subagents: 0,
      completed: 0,
      failed: 0,
      killed: { parent: 0, user: 0, system: 0 },
      refused: { depth_limit: 0, concurrency_limit: 0, budget: 0 },
      by_type: {},
    };
    for (const tracked of this.#tracked.values()) {
      const { task, entry } = tracked;
      const toolUseId = task.parent?.toolUseId;
      if (!task.querySource.startsWith("agent:") || toolUseId === undefined) continue;
      stats.spawned++;
      const background = this.#toolInput(toolUseId)?.run_in_background;
      if (background === true) stats.requested.background++;
      else if (background === false) stats.requested.foreground++;
      else stats.requested.unset++;
      const level = tracked.depth;
      stats.max_depth = Math.max(stats.max_depth, level);
      if (level > 1) stats.spawned_by_subagents++;
      if (task.background === true) stats.started_in_background++;
      if (entry.status === "completed") stats.completed++;
      else if (entry.status === "failed") stats.failed++;
      else if (entry.status === "cancelled") stats.killed[this.#stopped.has(task.id) ? "user" : "parent"]++;
      stats.by_type[entry.agentType] = (stats.by_type[entry.agentType] ?? 0) + 1;
    }
    return stats;
  }

  /** Finished forks' cost so far (for maxBudgetUsd). */
  costUsd(): number {
    let sum = 0;
    for (const tracked of this.#tracked.values()) sum += tracked.entry.costUSD;
    return sum;
  }

  #base() {
    return { session_id: this.#sessionId, uuid: randomUUID() };
  }

  #begin(task: SubAgentTask): void {
    const agentType = agentTypeOf(task.querySource);
    const toolUseId = task.parent?.toolUseId;
    const parent = this.#tracked.get(task.parent?.agentId ?? "");
    const depth = parent === undefined ? 1 : parent.depth + 1;
    const runId = randomUUID();
    const start: ForkStart = {
      agentId: task.id,
      agentType,
      toolUseId,
      querySource: task.querySource,
      opensWithSubagentStart: openingEvent(task) === "SubagentStart",
    };
    this.#tracked.set(task.id, {
      task,
      started: Date.now(),
      toolUses: 0,
      announced: new Set(),
      tokens: 0,
      replyTokens: 0,
      lastToolName: undefined,
      model: task.cacheSafeParams.model,
      runId,
      depth,
      entry: {
        agentId: task.id,
        agentType,
        parentToolUseId: toolUseId ?? null,
        model: task.cacheSafeParams.model,
        status: "running",
        numTurns: 0,
        durationMs: 0,
        inputTokens: 0,
        outputTokens: 0,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        costUSD: 0,
        cacheReadShare: 0,
      },
    });
    // Only forks a tool started (Agent, Skill) are tasks, as in the Agent SDK; compaction and
    // session-memory forks are in the ledger but not in the message stream.
    if (toolUseId === undefined) {
      this.#onStart(start);
      return;
    }
    const asked = this.#toolInput(toolUseId)?.prompt;
    const prompt = typeof asked === "string" ? asked : task.prompt;
    const agent = task.querySource.startsWith("agent:");
    if (task.background === true) {
      this.#background.set(task.id, {
        task_id: task.id,
        run_id: runId,
        task_type: agent ? "local_agent" : task.querySource,
        ...(agent ? { subagent_type: agentType } : {}),
        description: this.#description(task),
        ...(parent === undefined ? {} : { parent_task_id: parent.task.id }),
      });
      this.#backgroundChanged(toolUseId);
    }
    this.#emit({
      type: "system",
      subtype: "task_started",
      ...this.#base(),
      task_id: task.id,
      run_id: runId,
      tool_use_id: toolUseId,
      description: this.#description(task),
      ...(agent ? { subagent_type: agentType } : {}),
      // In this process (the Agent SDK's local_agent); in the background only when the model asked (R-T5).
      is_backgrounded: task.background === true,
      spawn_depth: depth,
      // A sub-agent's own sub-agent names the task that started it, as Claude Code's does.
      ...(parent === undefined ? {} : { parent_task_id: parent.task.id }),
      task_type: agent ? "local_agent" : task.querySource,
      ...(prompt === undefined ? {} : { prompt }),
    });
    const started = this.#onStart(start);
    // The task as the sub-agent's first user message, after SubagentStart, as the Agent SDK yields
    // it — for a foreground sub-agent; Claude Code yields none for a background one (R-T5).
    if (prompt === undefined || task.background === true) return;
    void Promise.resolve(started).then(() =>
      this.#emit({
        type: "user",
        ...this.#base(),
        message: { role: "user", content: [{ type: "text", text: prompt }] },
        parent_tool_use_id: toolUseId,
        ...this.#subAgentFields(task),
        timestamp: new Date().toISOString(),
      }),
    );
  }

  /** What the Agent SDK adds to each of a sub-agent's messages: whose and what for. */
  #subAgentFields(task: SubAgentTask): {
    agent_id: string;
    subagent_type?: string;
    task_description: string;
  } {
    return {
      agent_id: task.id,
      ...(task.querySource.startsWith("agent:") ? { subagent_type: agentTypeOf(task.querySource) } : {}),
      task_description: this.#description(task),
    };
  }

  #description(task: SubAgentTask): string {
    const toolUseId = task.parent?.toolUseId;
    const described = toolUseId === undefined ? undefined : this.#toolInput(toolUseId)?.description;
    return task.description ?? (typeof described === "string" ? described : undefined) ?? task.querySource;
  }

  /** A task_progress message: the sub-agent's activity (else its task's description) and its counts so far. */
  #progress(tracked: Tracked, activity: string | undefined): void {
    const toolUseId = tracked.task.parent?.toolUseId;
    if (toolUseId === undefined) return;
    this.#emit({
      type: "system",
      subtype: "task_progress",
      ...this.#base(),
      task_id: tracked.task.id,
      run_id: tracked.runId,
      tool_use_id: toolUseId,
      description: activity ?? this.#description(tracked.task),
      ...(tracked.task.querySource.startsWith("agent:") ? { subagent_type: tracked.entry.agentType } : {}),
      usage: {
        total_tokens: tracked.tokens + tracked.replyTokens,
        tool_uses: tracked.toolUses,
        duration_ms: Date.now() - tracked.started,
      },
      ...(tracked.lastToolName === undefined ? {} : { last_tool_name: tracked.lastToolName }),
    });
  }

  #onEvent(event: SubAgentEvent): void {
    const tracked = this.#tracked.get(event.agentId);
    if (tracked === undefined) return;
    const toolUseId = tracked.task.parent?.toolUseId;
    switch (event.type) {
      case "request_start":
        if (event.model !== "") tracked.model = event.model;
        return;
      case "text":
        return;
      case "tool_use_ready":
        // R-K2: as Claude Code, a tool call is announced as soon as its block is complete — before
        // its PreToolUse hook and before the reply holding it ends — in the words of what the
        // sub-agent is doing ("Reading notes.txt").
        // With forwarded text the blocks before the call are lines of their own, which Claude Code
        // prints before the announcement: the call is announced as its line is (#assistant).
        // A background sub-agent's call is announced after the reply holding it (#assistant).
        if (this.#forwardText || tracked.task.background === true) return;
        this.#announce(tracked, event.toolUseId, event.name, event.input);
        return;
      case "tool_use":
        if (event.input !== null && typeof event.input === "object")
          this.#subAgentToolInputs.set(event.toolUseId, event.input as Record<string, unknown>);
        return;
      case "assistant_message": {
        if (toolUseId === undefined) return;
        // As Claude Code: only the tool calls (a heartbeat of what the sub-agent does) — its final
        // report reaches the parent as the Agent tool's result — unless text is forwarded, then
        // every block of every reply (R-X3, --forward-subagent-text).
        // A background sub-agent's text is yielded too (its final reply): as Claude Code's, whose
        // parent reads the report in the task notification, not in a tool result (R-T5).
        const background = tracked.task.background === true;
        const blocks = this.#forwardText
          ? event.message.content
          : event.message.content.filter(
              (block) => block.type === "tool_use" || (background && block.type === "text"),
            );
        if (blocks.length === 0) return;
        this.#assistant(tracked, toolUseId, { ...event.message, content: blocks }, event.requestId);
        return;
      }
      case "tool_result":
        if (toolUseId !== undefined) {
          // The Agent SDK's sub-agent tool results carry no tool_use_result (the main loop's do).
          this.#emit({
            type: "user",
            ...this.#base(),
            message: {
              role: "user",
              content: [
                {
                  type: "tool_result",
                  tool_use_id: event.toolUseId,
                  content: event.content,
                  ...(event.isError || event.errorStated === true ? { is_error: event.isError } : {}),
                },
              ],
            },
            parent_tool_use_id: toolUseId,
            ...this.#subAgentFields(tracked.task),
            ...(event.meta === undefined
              ? {}
              : { tool_result_meta: [toolResultMetaEntry(event.toolUseId, event.meta)] }),
            timestamp: new Date().toISOString(),
          });
        }
        return;
      case "usage": {
        const total =
          event.usage.input_tokens +
          event.usage.output_tokens +
          event.usage.cache_read_input_tokens +
          event.usage.cache_creation_input_tokens;
        if (event.phase === "start") {
          tracked.replyTokens = total;
          return;
        }
        tracked.tokens += total;
        tracked.replyTokens = 0;
        return;
      }
      case "background_task":
        this.#shellTask(event.event, this.#subAgentShellRuns, tracked);
        return;
      case "started":
      case "api_retry":
      case "rate_limited":
      case "compact_boundary":
      case "done":
      // The pool keeps telemetry events for the exporter (R-V5); none reaches a caller.
      case "telemetry":
        return;
      default: {
        const unreachable: never = event;
        throw new Error(`unknown sub-agent event ${JSON.stringify(unreachable)}`);
      }
    }
  }

  /** A tool call's task_progress ("Reading notes.txt"), once per call: a retried stream that sends the block again announces nothing more. */
  #announce(tracked: Tracked, toolUseId: string, name: string, input: unknown): void {
    if (tracked.announced.has(toolUseId)) return;
    tracked.announced.add(toolUseId);
    tracked.toolUses++;
    tracked.lastToolName = name;
    this.#progress(tracked, toolActivity(name, input, this.#cwd));
  }

  /**
   * One message per content block, as the main loop's: the API message's own fields (its id,
   * usage, each block's caller) and its response's request id; the blocks share the message id.
   */
  #assistant(
    tracked: Tracked,
    parentToolUseId: string,
    message: ApiMessage,
    requestId: string | undefined,
  ): void {
    tracked.model = message.model;
    // Its tool calls were announced as their blocks completed (tool_use_ready), or, with forwarded
    // text, here: after the lines of the blocks before each, before its own — Claude Code's order
    // (text, task_progress, tool_use). A background sub-agent's calls are announced after their
    // own line: the Agent SDK and Claude Code yield its reply before its task_progress (R-T5, R-K2).
    const late = tracked.task.background === true;
    for (const block of message.content) {
      if (block.type === "tool_use" && !late) this.#announce(tracked, block.id, block.name, block.input);
      this.#emit({
        type: "assistant",
        ...this.#base(),
        message: oneBlockMessage(message, block),
        parent_tool_use_id: parentToolUseId,
        ...this.#subAgentFields(tracked.task),
        ...(requestId === undefined ? {} : { request_id: requestId }),
        timestamp: new Date().toISOString(),
      });
      if (block.type === "tool_use" && late) this.#announce(tracked, block.id, block.name, block.input);
    }
  }

  #finish(agentId: string, result: SubAgentResult): void {
    const tracked = this.#tracked.get(agentId);
    if (tracked === undefined) return;
    const usage = result.usage;
    tracked.entry = {
      ...tracked.entry,
      model: tracked.model,
      status: result.status,
      numTurns: result.turns,
      durationMs: result.durationMs,
      inputTokens: usage.inputTokens,
      outputTokens: usage.outputTokens,
      cacheReadInputTokens: usage.cacheReadInputTokens,
      cacheCreationInputTokens: usage.cacheCreationInputTokens,
      costUSD: result.costUsd,
      cacheReadShare: cacheReadShare([usage]),
    };
    const toolUseId = tracked.task.parent?.toolUseId;
    if (toolUseId === undefined) return;
    const status =
      result.status === "completed" ? "completed" : result.status === "failed" ? "failed" : "stopped";
    // The task's record changes before it reports, as the Agent SDK's task_updated says.
    this.#emit({
      type: "system",
      subtype: "task_updated",
      ...this.#base(),
      task_id: agentId,
      run_id: tracked.runId,
      patch: { status: status === "stopped" ? "killed" : status, end_time: Date.now() },
    });
    this.#emit({
      type: "system",
      subtype: "task_notification",
      ...this.#base(),
      task_id: agentId,
      run_id: tracked.runId,
      ...(toolUseId === undefined ? {} : { tool_use_id: toolUseId }),
      status,
      output_file: tracked.task.transcriptPath ?? "",
      summary: result.status === "completed" ? result.text : (result.error?.message ?? result.status),
      // A background agent's notice is how its report reaches the parent, as Claude Code says.
      ...(tracked.task.background === true && result.status === "completed"
        ? { summary_is_report: true }
        : {}),
      usage: {
        total_tokens:
          usage.inputTokens +
          usage.outputTokens +
          usage.cacheReadInputTokens +
          usage.cacheCreationInputTokens,
        tool_uses: tracked.toolUses,
        duration_ms: result.durationMs,
      },
    });
    if (this.#background.delete(agentId)) this.#backgroundChanged();
  }

  /**
   * Claude Code's list of the session's running background tasks, sent whenever it changes (R-T4,
   * R-T5); one a call started follows that call's message.
   */
  #backgroundChanged(after?: string): void {
    this.#emit(
      {
        type: "system",
        subtype: "background_tasks_changed",
        tasks: [...this.#background.values()].map((entry) => ({ ...entry })),
        ...this.#base(),
      },
      after,
    );
  }

  /**
   * R-T4, R-K2: the main agent's background commands (Bash run_in_background, or a call moved to
   * the background) as Claude Code's local_bash tasks: as one starts, before its call is answered,
   * the task list and task_started; as it ends, task_updated, task_notification and the list.
   * Background sub-agents are forks, reported by wrap(). Returns the unsubscribe function.
   */
  trackShells(shells: BackgroundShells): () => void {
    const runIds = new Map<string, string>();
    return shells.onTask((event) => this.#shellTask(event, runIds, undefined));
  }

  /**
   * One background command's start or end as Claude Code's task lines; a sub-agent's own
   * (`owner`, R-X1) say so (`owned_by_subagent`) and name the sub-agent's task (`parent_task_id`).
   */
  #shellTask(event: BackgroundTaskEvent, runIds: Map<string, string>, owner: Tracked | undefined): void {
    const { task } = event;
    if (task.kind !== "local_bash") return;
    const ids = { task_id: task.id, run_id: runIds.get(task.id) ?? randomUUID() };
    const owned = owner === undefined ? {} : { owned_by_subagent: true };
    const parent = owner === undefined ? {} : { parent_task_id: owner.task.id };
    if (event.type === "started") {
      runIds.set(task.id, ids.run_id);
      this.#background.set(task.id, {
        ...ids,
        task_type: "local_bash",
        description: task.description,
        ...parent,
      });
      this.#backgroundChanged(task.toolUseId);
      this.#emit({
        type: "system",
        subtype: "task_started",
        ...this.#base(),
        ...ids,
        ...owned,
        tool_use_id: task.toolUseId,
        description: task.description,
        is_backgrounded: true,
        ...parent,
        task_type: "local_bash",
      });
      return;
    }
    runIds.delete(task.id);
    this.#emit({
      type: "system",
      subtype: "task_updated",
      ...this.#base(),
      ...ids,
      patch: {
        status: task.status === "stopped" ? "killed" : task.status === "failed" ? "failed" : "completed",
        end_time: task.endedAt ?? Date.now(),
      },
    });
    this.#emit({
      type: "system",
      subtype: "task_notification",
      ...this.#base(),
      ...ids,
      ...owned,
      tool_use_id: task.toolUseId,
      status: task.status === "stopped" ? "stopped" : task.status === "failed" ? "failed" : "completed",
      output_file: task.outputFile,
      summary: event.summary,
    });
    if (this.#background.delete(task.id)) this.#backgroundChanged();
  }
}
