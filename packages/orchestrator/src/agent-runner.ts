import { type CompactionEvent, type CompactRunner, isCompactionFork } from "@forkloop/compaction";
import {
  type AssistantMessage,
  costUsd,
  getModelInfo,
  type LoopEvent,
  type LoopHooks,
  type Message,
  onAbort,
  type PermissionMode,
  type PromptExpansion,
  type QueryParams,
  query,
  type Terminal,
  type ToolUseContext,
} from "@forkloop/loop-core";
import { type AgentSessionMemory, createAgentContextPipeline } from "./agent-context.js";
import { type AgentProfile, profileLoopOptions } from "./agent-profile.js";
import {
  compactionHooks,
  promptWithContext,
  sessionStartContext,
  subagentStartContext,
  submitPrompt,
} from "./session-hooks.js";
import type { SubAgentTask } from "./sub-agent-types.js";
import { type AgentIdentity, AgentTelemetry } from "./telemetry/agent-telemetry.js";
import type { SpanRef, TelemetrySink } from "./telemetry/spans.js";
import { TRANSCRIPT_FORMAT, type TranscriptRecord, type TranscriptWriter } from "./transcript.js";
import { contextLimitsFor, TranscriptTiming } from "./transcript-timing.js";

/*
 * The one agent runner: the main session (in-process host, main-session.ts), every sub-agent and
 * every batch item (worker-thread host, sub-agent-runner.ts) build their context pipeline, open a
 * turn through the lifecycle hooks, drive loop-core's query(), price what it spent and record
 * start, events, timing and end in their transcript here, the same way (R-F1, R-L15).
 */

/** The transcript's first record of an agent (its limits are its model's, as priced). */
export function recordAgentStart(
  transcript: TranscriptWriter | undefined,
  start: {
    readonly sessionId: string;
    readonly agentId: string;
    readonly cwd: string;
    readonly model: string;
    readonly querySource: string;
    readonly profile: AgentProfile;
  },
  extra: Partial<Extract<TranscriptRecord, { type: "session_start" }>> = {},
): void {
  const { profile, ...fields } = start;
  transcript?.append({
    type: "session_start",
    ...fields,
    createdAt: new Date().toISOString(),
    ...extra,
    limits: contextLimitsFor(getModelInfo(start.model, profile.modelOverrides), profile.autoCompactWindow),
    format: TRANSCRIPT_FORMAT,
  });
}

/** The transcript's last record of a run: how it ended and what it spent. */
export function recordAgentEnd(
  transcript: TranscriptWriter | undefined,
  end: Pick<Terminal, "reason" | "turnCount" | "usage">,
  cost: number,
): void {
  const { reason, turnCount, usage } = end;
  transcript?.append({
    type: "terminal",
    reason,
    turnCount,
    usage,
    costUsd: cost,
    endedAt: new Date().toISOString(),
  });
}

/** An agent's context pipeline (§4) with its PreCompact and SessionStart `compact` hooks. */
export function agentPipeline(options: {
  readonly profile: AgentProfile;
  readonly hooks: LoopHooks | undefined;
  readonly context: () => ToolUseContext;
  readonly runCompact: CompactRunner;
  readonly sessionMemory?: AgentSessionMemory | undefined;
  readonly onEvent?: ((event: CompactionEvent) => void) | undefined;
}) {
  return createAgentContextPipeline({
    ...compactionHooks(options.hooks, options.context, () => options.context().options.model),
    runCompact: options.runCompact,
    modelOverrides: options.profile.modelOverrides,
    autoCompactWindow: options.profile.autoCompactWindow,
    contextEditing: options.profile.contextEditing,
    ...(options.sessionMemory === undefined ? {} : { sessionMemory: options.sessionMemory }),
    ...(options.onEvent === undefined ? {} : { onEvent: options.onEvent }),
  });
}

/** What a UserPromptSubmit (or UserPromptExpansion) block ends with (R-L6 `hook_stopped`), the same for every agent. */
export function promptBlocked(
  reason: string,
  event: "UserPromptSubmit" | "UserPromptExpansion" = "UserPromptSubmit",
): { readonly type: "prompt_blocked"; readonly message: string } {
  return { type: "prompt_blocked", message: `a ${event} hook blocked the prompt: ${reason}` };
}

/** The hooks that open an agent's conversation, and what they add. */
export interface AgentOpening {
  readonly event: "SessionStart" | "SubagentStart";
  readonly context: () => Promise<readonly string[]>;
}

/**
 * Opens a turn: SessionStart's or SubagentStart's context (when this turn opens the agent), the prompt, then
 * UserPromptSubmit's (and UserPromptExpansion's, for an expanded command) context after it; a
 * blocking one runs no turn.
 */
export async function openTurn(
  hooks: LoopHooks | undefined,
  turn: {
    /** What opens the conversation (SessionStart's, SubagentStart's context); undefined: nothing. */
    readonly opening: AgentOpening | undefined;
    readonly prompt: string;
    /** The command the prompt was typed as (UserPromptSubmit sees it, UserPromptExpansion fires). */
    readonly expansion?: PromptExpansion | undefined;
    readonly context: ToolUseContext;
    readonly previous: Message | undefined;
    readonly promptMessages: (parentUuid: string | null) => Message[];
  },
): Promise<
  | { readonly ok: true; readonly messages: Message[] }
  | {
      readonly ok: false;
      readonly reason: string;
      readonly event: "UserPromptSubmit" | "UserPromptExpansion";
    }
> {
  const started = (await turn.opening?.context()) ?? [];
  const verdict = await submitPrompt(hooks, {
    prompt: turn.prompt,
    expansion: turn.expansion,
    context: turn.context,
  });
  if (!verdict.ok) return verdict;
  const model = turn.context.options.model;
  const context = [...started, ...verdict.context];
  return { ok: true, messages: promptWithContext(context, model, turn.previous, turn.promptMessages) };
}

/**
 * An agent's tool context for one run: its abort controller, model and permission mode, and the
 * tools its bare deny rules removed (a call to one is told so, R-P1).
 */
export function agentToolContext(
  agent: Pick<ToolUseContext, "cwd" | "workspaceRoots" | "tools" | "agentId" | "agentState"> & {
    readonly denyRules: readonly string[];
  },
  abortController: AbortController,
  model: string,
  permissionMode: PermissionMode,
): ToolUseContext {
  const { denyRules, ...rest } = agent;
  const disabledTools = denyRules.filter((rule) => !rule.includes("("));
  return {
    ...rest,
    ...(disabledTools.length > 0 ? { disabledTools } : {}),
    abortController,
    options: { model, permissionMode },
  };
}

/**
 * How a worker agent opens: a batch item as a session of its own (SessionStart `startup`, then
 * UserPromptSubmit), any other fork with SubagentStart (its type: the agent's name for an Agent
 * call, else its query source), a continuation and compaction's own forks (the summary, session
 * memory: Claude Code fires no SubagentStart for its summariser, R-X1) with neither.
 */
export function workerAgentOpening(
  task: Pick<SubAgentTask, "startsSession" | "continues" | "querySource" | "parent">,
  hooks: LoopHooks | undefined,
  context: ToolUseContext,
): { readonly submits: boolean; readonly opening: AgentOpening | undefined } {
  const event = openingEvent(task);
  if (event === undefined) return { submits: false, opening: undefined };
  if (event === "SessionStart")
    return {
      submits: true,
      opening: {
        event: "SessionStart",
        context: () =>
          sessionStartContext(hooks, { source: "startup", model: context.options.model, context }),
      },
    };
  const toolUseId = task.parent?.toolUseId;
  const agentType = agentTypeOf(task.querySource);
  return {
    submits: false,
    opening: {
      event: "SubagentStart",
      context: () =>
        subagentStartContext(hooks, {
          agentType,
          ...(toolUseId === undefined ? {} : { toolUseId }),
          context,
        }),
    },
  };
}

/** The hook event a worker agent opens with (workerAgentOpening's rule): none, SessionStart or SubagentStart. */
export function openingEvent(
  task: Pick<SubAgentTask, "startsSession" | "continues" | "querySource">,
): "SessionStart" | "SubagentStart" | undefined {
  if (task.continues === true || isCompactionFork(task.querySource)) return undefined;
  return task.startsSession === true ? "SessionStart" : "SubagentStart";
}

/** A worker agent's type (its hooks' `agent_type`, its spans' name): an Agent call's definition name, else what the fork is for. */
export function agentTypeOf(querySource: string): string {
  return querySource.startsWith("agent:") ? querySource.slice("agent:".length) : querySource;
}

/** Aborts `controller` when `signal` does; the returned function unlinks them. */
export function linkAbort(signal: AbortSignal | undefined, controller: AbortController): () => void {
  if (signal === undefined) return () => {};
  // Shared with the turn's other waiters: parallel Agent calls add no listener each (R-T2).
  return onAbort(signal, () => controller.abort(signal.reason));
}

/** Where an agent's spans go and what they hang from (R-V5); absent when telemetry is off. */
export interface AgentTelemetryTarget {
  readonly sink: TelemetrySink;
  readonly parent: SpanRef | undefined;
  readonly agent: AgentIdentity;
}

/** One agent's transcript, timing, telemetry and price of what its loop spent. */
export class AgentRecorder {
  readonly transcript: TranscriptWriter | undefined;
  readonly timing: TranscriptTiming | undefined;
  readonly telemetry: AgentTelemetry | undefined;
  readonly #profile: AgentProfile;
  readonly #model: string;

  constructor(
    transcript: TranscriptWriter | undefined,
    profile: AgentProfile,
    model: string,
    telemetry?: AgentTelemetryTarget,
  ) {
    this.transcript = transcript;
    this.#profile = profile;
    this.#model = model;
    this.telemetry =
      telemetry === undefined
        ? undefined
        : new AgentTelemetry({ ...telemetry, costOf: (message) => this.priceOf(message) });
    this.timing =
      transcript === undefined
        ? undefined
        : new TranscriptTiming({
            append: (record) => transcript.append(record),
            costOf: (message) => this.priceOf(message),
          });
  }

  /** A reply's cost, priced on the model that answered (model overrides included). */
  priceOf(message: AssistantMessage): number {
    return costUsd(
      getModelInfo(message.message.model || this.#model, this.#profile.modelOverrides),
      message.message.usage,
    );
  }

  /**
   * The agent's hooks with the timing stamp (with a transcript) and the tool span's start (with
   * telemetry) on its tool calls; neither has an opinion on the call.
   */
  hooks(hooks: LoopHooks | undefined): Pick<QueryParams, "hooks"> {
    let wrapped = hooks;
    if (this.telemetry !== undefined)
      wrapped = { ...wrapped, preToolUse: [this.telemetry.toolHook(), ...(wrapped?.preToolUse ?? [])] };
    if (this.timing !== undefined) wrapped = this.timing.withToolHook(wrapped);
    return wrapped === undefined ? {} : { hooks: wrapped };
  }

  /** The loop options the agent's profile decides for a request on the recorder's model. */
  loopOptions(): ReturnType<typeof profileLoopOptions> {
    return profileLoopOptions(this.#profile, this.#model);
  }

  /**
   * Drives query() with the profile's loop options under `params` and the agent's hooks stamped
   * (see `hooks`): every event is recorded, timed and priced before the host sees it; returns the
   * terminal and the cost of the replies.
   */
  async *drive(
    loop: Omit<QueryParams, "hooks"> & { readonly hooks?: LoopHooks | undefined },
  ): AsyncGenerator<LoopEvent, { terminal: Terminal; costUsd: number }> {
    const { hooks, ...own } = loop;
    const params: QueryParams = { ...this.loopOptions(), ...own, ...this.hooks(hooks) };
    let cost = 0;
    const telemetry = this.telemetry;
    telemetry?.beginTurn(params.toolUseContext.options.model);
    let ended: { terminal: Terminal; costUsd: number } | { error: unknown } = {
      error: "the turn was abandoned before it ended",
    };
    try {
      const generator = query(params);
      let step = await generator.next();
      while (!step.done) {
        const event = step.value;
        this.transcript?.appendLoopEvent(event);
        this.timing?.observe(event);
        telemetry?.observe(event);
        if (event.type === "assistant" && !event.apiError) cost += this.priceOf(event);
        yield event;
        step = await generator.next();
      }
      ended = { terminal: step.value, costUsd: cost };
      return ended;
    } catch (error) {
      ended = { error };
      throw error;
    } finally {
      telemetry?.endTurn(ended);
    }
  }
}

/** What one drive of an agent's loop is given: query()'s parameters, hooks unstamped. */
export type AgentLoop = Parameters<AgentRecorder["drive"]>[0];

/**
 * One turn of any agent, on either host: query() driven through the recorder (every event
 * recorded, timed and priced), `onEvent` seeing each event before the host does, and the turn's
 * timing closed however it ends. The in-process host yields the events on; the worker host
 * forwards them from `onEvent` and only needs the end (`finishTurn`).
 */
export async function* runTurn(
  recorder: AgentRecorder,
  loop: AgentLoop,
  onEvent: (event: LoopEvent) => void,
): AsyncGenerator<LoopEvent, { terminal: Terminal; costUsd: number }> {
  try {
    const events = recorder.drive(loop);
    for (let step = await events.next(); ; step = await events.next()) {
      if (step.done) return step.value;
      onEvent(step.value);
      yield step.value;
    }
  } finally {
    recorder.timing?.finish();
  }
}

/** Runs a turn to its end for a host that forwards its events rather than yielding them. */
export async function finishTurn<T>(turn: AsyncGenerator<unknown, T>): Promise<T> {
  for (;;) {
    const step = await turn.next();
    if (step.done) return step.value;
  }
}
