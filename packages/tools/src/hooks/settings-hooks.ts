import {
  type InstructionsLoadedInput,
  type InstructionsLoadedOutcome,
  type LoopHooks,
  lastAssistantText,
  type PermissionMode,
  type PostCompactInput,
  type PostToolBatchInput,
  type PostToolBatchOutcome,
  type PostToolUseInput,
  type PostToolUseOutcome,
  type PreCompactInput,
  type PreCompactOutcome,
  type PreToolUseInput,
  type PreToolUseOutcome,
  type SessionStartInput,
  type SessionStartOutcome,
  type StopFailureInput,
  type StopHookInput,
  type StopHookOutcome,
  type SubagentStartInput,
  type SubagentStartOutcome,
  type ToolUseContext,
  toolUseResultOf,
  type UserPromptExpansionInput,
  type UserPromptExpansionOutcome,
  type UserPromptSubmitInput,
  type UserPromptSubmitOutcome,
} from "@forkloop/loop-core";
import { runningBackgroundTasks } from "../background/background-shells.js";
import type { HookEvent, Settings } from "../settings/settings-schema.js";
import { compileMatcher } from "./hook-matcher.js";
import {
  type HookEventInput,
  type HookEventOutcome,
  type HookRunObserver,
  type PermissionRequestHookDecision,
  runHookEvent as runEvent,
  type StopFailureKind,
  stopFailureKind,
} from "./run-hook-event.js";

/** Something hooks said that is for the user or the log, not for the model. */
export interface HookNotice {
  readonly event: HookEvent;
  readonly kind: "error" | "systemMessage";
  readonly message: string;
}

export interface SettingsHooksOptions {
  readonly cwd: string;
  readonly sessionId: string;
  readonly transcriptPath?: string;
  /** Non-blocking hook errors and `systemMessage`s; without it they are dropped. */
  readonly onNotice?: (notice: HookNotice) => void;
  /** Each hook command as it starts and ends (Claude Code's `--include-hook-events`). */
  readonly onHookRun?: HookRunObserver;
  /** The current user prompt's id (`prompt_id`), absent before the first. */
  readonly promptId?: () => string | undefined;
  /** The effort the session's requests ask for (`effort.level` within a model turn). */
  readonly effort?: () => string | undefined;
  /** A sub-agent's own transcript (SubagentStop's `agent_transcript_path`). */
  readonly agentTranscriptPath?: (agentId: string) => string | undefined;
  /** A sub-agent's type (`general-purpose`, a definition's name): `agent_type` of its events. */
  readonly agentType?: (agentId: string) => string | undefined;
  /**
   * Agents that are the top of a session of their own (each item of a batch, like one `claude -p`
   * per item): their hooks report that session, and their stop is a Stop, not a SubagentStop.
   * Default: only the agent `main`.
   */
  readonly sessionOf?: (
    agentId: string,
  ) => { readonly sessionId: string; readonly transcriptPath?: string } | undefined;
  /**
   * Resolves once the message holding a tool call is out: a sub-agent's SubagentStart hooks run
   * after the message holding the call that started it, as Claude Code's. Default: at once.
   */
  readonly toolUseYielded?: (toolUseId: string) => Promise<void>;
}

/**
 * Adapts the shell hooks of settings (Claude Code's protocol, see runHookEvent) to the loop's
 * LoopHooks: PreToolUse can deny (exit 2 / `deny`), ask, allow, rewrite the input or stop the loop
 * (`continue: false` → terminal `hook_stopped`); PostToolUse feedback (exit 2 stderr, `block`
 * reason, additionalContext) is appended to the tool_result; PostToolBatch sees each reply's
 * calls once they all have results, and its additionalContext follows them; a blocking Stop hook keeps the loop
 * going with its reason (R-L15), `continue: false` prevents continuation. A sub-agent's stop runs
 * the SubagentStop hooks instead of Stop, and one that ended on an API error the StopFailure hooks.
 */
export function createSettingsHooks(settings: Settings, options: SettingsHooksOptions): LoopHooks {
  const runHookEvent = observed(options.onHookRun);
  const base = (context: ToolUseContext) => {
    const own = options.sessionOf?.(context.agentId);
    const transcriptPath = own === undefined ? options.transcriptPath : own.transcriptPath;
    return {
      ...promptFields(options),
      cwd: context.cwd,
      sessionId: own?.sessionId ?? options.sessionId,
      permissionMode: context.options.permissionMode,
      signal: context.abortController.signal,
      ...(transcriptPath === undefined ? {} : { transcriptPath }),
      ...(topLevel(context.agentId) ? {} : subAgent(context.agentId)),
    };
  };
  const topLevel = (agentId: string): boolean =>
    agentId === "main" || options.sessionOf?.(agentId) !== undefined;
  const subAgent = (agentId: string) => {
    const agentType = options.agentType?.(agentId);
    return { agentId, ...(agentType === undefined ? {} : { agentType }) };
  };
  const report = reporter(options.onNotice);

  const preToolUse = async (input: PreToolUseInput): Promise<PreToolUseOutcome> => {
    const outcome = await runHookEvent("PreToolUse", settings, {
      ...base(input.context),
      toolName: input.toolName,
      toolInput: input.toolInput,
      toolUseId: input.toolUseId,
    });
    report(outcome);
    const reason = outcome.permissionDecisionReason ?? (outcome.blockReasons.join("\n") || undefined);
    // A hook that exits 2 denies in Claude Code's words (R-X1): its command and its stderr.
    const denied = outcome.permissionDecision === "deny" && outcome.blockingError !== undefined;
    return {
      ...(outcome.permissionDecision === undefined ? {} : { decision: outcome.permissionDecision }),
      ...(reason === undefined ? {} : { reason }),
      ...(denied ? { blockingError: outcome.blockingError } : {}),
      ...(outcome.updatedInput === undefined ? {} : { updatedInput: outcome.updatedInput }),
      ...stopFields(outcome),
    };
  };

  // A failed call is a PostToolUseFailure with its error text, not a PostToolUse, as in Claude Code.
  const postToolUse = async (input: PostToolUseInput): Promise<PostToolUseOutcome> => {
    const call = {
      ...base(input.context),
      toolName: input.toolName,
      toolInput: input.toolInput,
      toolUseId: input.toolUseId,
      ...(input.durationMs === undefined ? {} : { durationMs: input.durationMs }),
    };
    const outcome =
      input.result.isError === true
        ? await runHookEvent("PostToolUseFailure", settings, {
            ...call,
            error: resultText(input.result.content),
            isInterrupt: input.context.abortController.signal.aborted,
          })
        : await runHookEvent("PostToolUse", settings, {
            ...call,
            toolResponse: toolUseResultOf(input.result),
          });
    report(outcome);
    const feedback = [...outcome.blockReasons, ...outcome.additionalContext].join("\n\n");
    return { ...(feedback === "" ? {} : { additionalContext: feedback }), ...stopFields(outcome) };
  };

  const postToolBatch = async (input: PostToolBatchInput): Promise<PostToolBatchOutcome> => {
    const outcome = await runHookEvent("PostToolBatch", settings, {
      ...base(input.context),
      toolCalls: input.calls.map((call) => ({
        tool_name: call.toolName,
        tool_input: call.toolInput,
        tool_use_id: call.toolUseId,
        tool_response: call.toolResponse,
      })),
    });
    report(outcome);
    return outcome.additionalContext.length === 0 ? {} : { additionalContext: outcome.additionalContext };
  };

  const stop = async (input: StopHookInput): Promise<StopHookOutcome> => {
    const { agentId } = input.context;
    const event = topLevel(agentId) ? "Stop" : "SubagentStop";
    const last = lastAssistantText(input.messages);
    const agentTranscriptPath = options.agentTranscriptPath?.(agentId);
    const outcome = await runHookEvent(event, settings, {
      ...base(input.context),
      stopHookActive: input.stopHookActive,
      backgroundTasks: runningBackgroundTasks(input.context.agentState),
      ...(last === undefined ? {} : { lastAssistantMessage: last }),
      ...(event === "SubagentStop" && agentTranscriptPath !== undefined ? { agentTranscriptPath } : {}),
    });
    report(outcome);
    return {
      ...(outcome.blockReasons.length === 0 ? {} : { blockingErrors: outcome.blockReasons }),
      ...(outcome.continue ? {} : { preventContinuation: true }),
      ...(outcome.stopReason === undefined ? {} : { stopReason: outcome.stopReason }),
    };
  };

  const sessionStart = async (input: SessionStartInput): Promise<SessionStartOutcome> => {
    const outcome = await runHookEvent("SessionStart", settings, {
      ...base(input.context),
      source: input.source,
      model: input.model,
      ...(input.resumedCache === undefined ? {} : { resumedCache: input.resumedCache }),
    });
    report(outcome);
    return outcome.additionalContext.length === 0 ? {} : { additionalContext: outcome.additionalContext };
  };

  // A prompt's hooks: a block drops it, their context follows it.
  const promptVerdict = (outcome: HookEventOutcome): UserPromptSubmitOutcome => {
    report(outcome);
    return {
      ...(outcome.blocked
        ? { blockReason: outcome.blockReasons.join("\n") || `a ${outcome.event} hook blocked the prompt` }
        : {}),
      ...(outcome.additionalContext.length === 0 ? {} : { additionalContext: outcome.additionalContext }),
      ...stopFields(outcome),
    };
  };

  const userPromptSubmit = async (input: UserPromptSubmitInput): Promise<UserPromptSubmitOutcome> =>
    promptVerdict(
      await runHookEvent("UserPromptSubmit", settings, { ...base(input.context), prompt: input.prompt }),
    );

  const userPromptExpansion = async (
    input: UserPromptExpansionInput,
  ): Promise<UserPromptExpansionOutcome> => {
    const { typedPrompt, ...expansion } = input.expansion;
    return promptVerdict(
      await runHookEvent("UserPromptExpansion", settings, {
        ...base(input.context),
        prompt: typedPrompt,
        expansion,
      }),
    );
  };

  const instructionsLoaded = async (input: InstructionsLoadedInput): Promise<InstructionsLoadedOutcome> => {
    const { context, ...instructions } = input;
    report(await runHookEvent("InstructionsLoaded", settings, { ...base(context), instructions }));
    return {};
  };

  // PreCompact and PostCompact only observe: what they say is reported, nothing more.
  const observe = async (
    event: "PreCompact" | "PostCompact",
    input: Omit<HookEventInput, "cwd" | "sessionId">,
    context: ToolUseContext,
  ): Promise<PreCompactOutcome> => {
    report(await runHookEvent(event, settings, { ...base(context), ...input }));
    return {};
  };
  const preCompact = ({ context, trigger, customInstructions }: PreCompactInput) =>
    observe("PreCompact", { trigger, customInstructions }, context);
  const postCompact = ({ context, trigger, compactSummary }: PostCompactInput) =>
    observe("PostCompact", { trigger, compactSummary }, context);

  // A sub-agent opens with its SubagentStart hooks (their matcher sees its type); their
  // additionalContext reaches its model, as Claude Code's (hooks-subagent-start-context).
  const subagentStart = async ({
    agentType,
    toolUseId,
    context,
  }: SubagentStartInput): Promise<SubagentStartOutcome> => {
    if (toolUseId !== undefined) await options.toolUseYielded?.(toolUseId);
    const outcome = await runHookEvent("SubagentStart", settings, {
      ...base(context),
      agentId: context.agentId,
      agentType,
    });
    report(outcome);
    return outcome.additionalContext.length === 0 ? {} : { additionalContext: outcome.additionalContext };
  };

  // A sub-agent's run (or a batch item's, a session of its own) that ended on an API error: its
  // runner calls this instead of Stop, as Claude Code fires a sub-agent's StopFailure with its
  // agent_id and agent_type (hooks-subagent-api-error). A main turn's is the session's event.
  const stopFailure = async ({ apiError, text, context }: StopFailureInput): Promise<PreCompactOutcome> => {
    report(
      await runHookEvent("StopFailure", settings, {
        ...base(context),
        failure: stopFailureKind(apiError.status),
        lastAssistantMessage: text,
      }),
    );
    return {};
  };

  // Only events that have hooks get a function, so a loop with no hooks spawns nothing.
  const has = (event: HookEvent): boolean => (settings.hooks[event]?.length ?? 0) > 0;
  return {
    ...(has("PreToolUse") ? { preToolUse: [preToolUse] } : {}),
    ...(has("PostToolUse") || has("PostToolUseFailure") ? { postToolUse: [postToolUse] } : {}),
    ...(has("PostToolBatch") ? { postToolBatch: [postToolBatch] } : {}),
    ...(has("Stop") || has("SubagentStop") ? { stop: [stop] } : {}),
    ...(has("SessionStart") ? { sessionStart: [sessionStart] } : {}),
    ...(has("UserPromptSubmit") ? { userPromptSubmit: [userPromptSubmit] } : {}),
    ...(has("UserPromptExpansion") ? { userPromptExpansion: [userPromptExpansion] } : {}),
    ...(has("InstructionsLoaded") ? { instructionsLoaded: [instructionsLoaded] } : {}),
    ...(has("PreCompact") ? { preCompact: [preCompact] } : {}),
    ...(has("PostCompact") ? { postCompact: [postCompact] } : {}),
    ...(has("StopFailure") ? { stopFailure: [stopFailure] } : {}),
    ...(has("SubagentStart") ? { subagentStart: [subagentStart] } : {}),
  };
}

/** `prompt_id` and the effort, as the getters say when the event fires. */
function promptFields(options: Partial<Pick<SettingsHooksOptions, "promptId" | "effort">>): {
  promptId?: string;
  effort?: string;
} {
  const promptId = options.promptId?.();
  const effort = options.effort?.();
  return {
    ...(promptId === undefined ? {} : { promptId }),
    ...(effort === undefined ? {} : { effort }),
  };
}

/** runHookEvent, telling `onRun` of each command's run. */
function observed(onRun: HookRunObserver | undefined): typeof runEvent {
  if (onRun === undefined) return runEvent;
  return (event, settings, input: HookEventInput) => runEvent(event, settings, { ...input, onRun });
}

/** Hooks' non-blocking errors and system messages, as notices. */
function reporter(onNotice: SettingsHooksOptions["onNotice"]): (outcome: HookEventOutcome) => void {
  return (outcome) => {
    for (const message of outcome.errors) onNotice?.({ event: outcome.event, kind: "error", message });
    for (const message of outcome.systemMessages)
      onNotice?.({ event: outcome.event, kind: "systemMessage", message });
  };
}

/** A tool result's text (its text blocks), as PostToolUseFailure's `error`. */
function resultText(content: PostToolUseInput["result"]["content"]): string {
  if (typeof content === "string") return content;
  return content
    .map((block) => (block.type === "text" ? block.text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

/** The session's own events: fired by the session's runner, not by an agent's loop. */
export interface SessionEventHooks {
  /**
   * The main agent's reply with text is shown (Claude Code's MessageDisplay: a headless run shows
   * each reply whole, so one call with `index` 0 and `final` true carries all its text).
   */
  readonly messageDisplay?: (message: { turnId: string; messageId: string; text: string }) => Promise<void>;
  /**
   * A call needs an answer (a prompt would be shown, or nobody can answer it): Claude Code's
   * PermissionRequest, fired before the question is put or the call denied; its matcher sees the
   * tool name. Undefined when no hook decided.
   */
  readonly permissionRequest?: (request: {
    toolName: string;
    toolInput: Record<string, unknown>;
    suggestions: readonly unknown[];
    mode: PermissionMode;
    toolUseId: string;
    agentId: string;
    signal?: AbortSignal;
  }) => Promise<PermissionRequestHookDecision | undefined>;
  /**
   * A turn ended on an API error (Claude Code's StopFailure, fired instead of Stop): the error's
   * kind (what its matcher sees) and the text shown for it.
   */
  readonly stopFailure?: (failure: { error: StopFailureKind; text: string }) => Promise<void>;
  /** The session ends (its last turn finished, failed or was stopped). */
  readonly sessionEnd?: (reason: "other" | "prompt_input_exit") => Promise<void>;
}

/**
 * MessageDisplay, PermissionRequest, StopFailure and SessionEnd from the settings' shell hooks
 * (Claude Code's inputs: turn_id, message_id and the text; tool_name, tool_input and
 * permission_suggestions; error and last_assistant_message; reason). Only PermissionRequest's
 * answer is acted on (its decision); the others only observe.
 */
export function createSessionEventHooks(
  settings: Settings,
  options: Pick<
    SettingsHooksOptions,
    "cwd" | "sessionId" | "transcriptPath" | "onNotice" | "onHookRun" | "promptId" | "effort" | "agentType"
  >,
): SessionEventHooks {
  const runHookEvent = observed(options.onHookRun);
  const fixed = {
    cwd: options.cwd,
    sessionId: options.sessionId,
    ...(options.transcriptPath === undefined ? {} : { transcriptPath: options.transcriptPath }),
  };
  // The prompt id is read when the event fires.
  const base = () => ({ ...fixed, ...promptFields(options) });
  const report = reporter(options.onNotice);
  const has = (event: HookEvent): boolean => (settings.hooks[event]?.length ?? 0) > 0;
  return {
    ...(has("MessageDisplay")
      ? {
          messageDisplay: async ({ turnId, messageId, text }) =>
            report(await runHookEvent("MessageDisplay", settings, { ...base(), turnId, messageId, text })),
        }
      : {}),
    ...(has("PermissionRequest")
      ? {
          permissionRequest: async ({
            toolName,
            toolInput,
            suggestions,
            mode,
            toolUseId,
            agentId,
            signal,
          }) => {
            const agentType = agentId === "main" ? undefined : options.agentType?.(agentId);
            const outcome = await runHookEvent("PermissionRequest", settings, {
              ...base(),
              permissionMode: mode,
              toolName,
              toolInput,
              toolUseId,
              permissionSuggestions: suggestions,
              ...(agentId === "main" ? {} : { agentId, ...(agentType === undefined ? {} : { agentType }) }),
              ...(signal === undefined ? {} : { signal }),
            });
            report(outcome);
            return outcome.permissionRequestDecision;
          },
        }
      : {}),
    ...(has("StopFailure")
      ? {
          stopFailure: async ({ error, text }) =>
            report(
              await runHookEvent("StopFailure", settings, {
                ...base(),
                failure: error,
                lastAssistantMessage: text,
              }),
            ),
        }
      : {}),
    ...(has("SessionEnd")
      ? {
          sessionEnd: async (reason) =>
            report(await runHookEvent("SessionEnd", settings, { ...base(), reason })),
        }
      : {}),
  };
}

function stopFields(outcome: HookEventOutcome): { continue?: false; stopReason?: string } {
  if (outcome.continue) return {};
  return outcome.stopReason === undefined
    ? { continue: false }
    : { continue: false, stopReason: outcome.stopReason };
}

/** Combines hook sets (e.g. in-process function hooks of a library user + shell hooks from settings); order kept. */
export function mergeHooks(...hooks: readonly LoopHooks[]): LoopHooks {
  const merged: { -readonly [Kind in keyof LoopHooks]: unknown[] } = {};
  for (const set of hooks) {
    for (const [kind, list] of Object.entries(set) as [keyof LoopHooks, readonly unknown[] | undefined][]) {
      if (list && list.length > 0) merged[kind] = [...(merged[kind] ?? []), ...list];
    }
  }
  return merged as LoopHooks;
}

/**
 * Restricts an in-process tool hook to tools whose name matches `matcher` (the same regex syntax
 * as settings matchers, e.g. "Edit|Write"); other tools get "no opinion".
 */
export function withToolMatcher<Input extends { readonly toolName: string }, Outcome extends object>(
  matcher: string,
  hook: (input: Input) => Promise<Outcome>,
): (input: Input) => Promise<Outcome | Record<string, never>> {
  const matches = compileMatcher(matcher);
  return async (input) => (matches(input.toolName) ? hook(input) : {});
}
