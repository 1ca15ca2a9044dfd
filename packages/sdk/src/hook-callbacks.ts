import { randomUUID } from "node:crypto";
import {
  type LoopHooks,
  lastAssistantText,
  type PermissionDecision,
  type PostToolBatchOutcome,
  type PostToolUseOutcome,
  type PreToolUseOutcome,
  type SessionStartOutcome,
  type StopHookOutcome,
  type SubagentStartOutcome,
  type ToolUseContext,
  toolUseResultOf,
  type UserPromptExpansionOutcome,
  type UserPromptSubmitOutcome,
} from "@forkloop/loop-core";
import { compileMatcher, hookTextForModel, runningBackgroundTasks } from "@forkloop/tools";
import type { SDKAssistantMessageError } from "./agent-sdk-types/other-messages.js";
import { assistantErrorKind } from "./api-error-line.js";
import type {
  BaseHookInput,
  FiredHookEvent,
  HookCallbackMatcher,
  HookEvent,
  HookInput,
  HookJSONOutput,
} from "./options.js";
import { OptionsError } from "./options-error.js";

/** Seconds a hook callback may take before its answer counts as "no opinion" (Claude Code's 60). */
const DEFAULT_HOOK_TIMEOUT_S = 60;

export interface HookSession {
  readonly sessionId: string;
  readonly transcriptPath: string;
  readonly cwd: string;
  /** A sub-agent's transcript (SubagentStop's `agent_transcript_path`). */
  readonly subAgentTranscript: (agentId: string) => string;
  /** The agent type of a running fork (`general-purpose`, a definition's name). */
  readonly agentType: (agentId: string) => string | undefined;
  /** Non-blocking hook failures, one line each. */
  readonly onError: (line: string) => void;
  /**
   * Resolves once the message holding a tool call has reached the program: the main loop's
   * PreToolUse waits for it, as the Agent SDK calls the hook after yielding that message.
   * Default: at once.
   */
  readonly toolUseYielded?: (toolUseId: string) => Promise<void>;
  /** The effort the session's requests ask for (none for a model without effort levels). */
  readonly effort?: () => string | undefined;
  /** Each callback's end: whether it answered (not thrown or timed out) and its systemMessage. */
  readonly onRan?: (event: FiredHookEvent, ok: boolean, systemMessage: string | undefined) => void;
}

type Matchers = Partial<Record<HookEvent, HookCallbackMatcher[]>>;

/**
 * What forkloop reads from a callback's answer, whatever its event's specific output: an
 * `{ async: true }` answer is no opinion (the callback carries on by itself), and a PreToolUse
 * `defer` (the Agent SDK hands the call back to its host) is asked through `canUseTool`.
 */
export interface HookAnswer {
  continue?: boolean;
  stopReason?: string;
  decision?: "approve" | "block";
  reason?: string;
  systemMessage?: string;
  hookSpecificOutput?: {
    hookEventName: string;
    permissionDecision?: "allow" | "deny" | "ask" | "defer";
    permissionDecisionReason?: string;
    updatedInput?: Record<string, unknown>;
    additionalContext?: string;
    /** PermissionRequest's answer. */
    decision?:
      | { behavior: "allow"; updatedInput?: Record<string, unknown> }
      | { behavior: "deny"; message?: string; interrupt?: boolean };
  };
}

function answerOf(output: HookJSONOutput | undefined | null): HookAnswer[] {
  if (output === undefined || output === null || "async" in output) return [];
  return [output];
}

/**
 * The program's own matchers run on the settings matchers' linear-time engine (R-S12): one
 * syntax for both, and a matcher a program builds from its input cannot stop the run.
 */
function matches(matcher: string | undefined, value: string): boolean {
  return compileMatcher(matcher)(value);
}

/**
 * The `hooks` option's matchers, checked before the session starts: one RE2 cannot run (a
 * lookahead, a backreference) is bad input naming the hook and the fix.
 */
export function checkHookMatchers(hooks: Matchers): void {
  for (const [event, groups] of Object.entries(hooks)) {
    for (const [index, group] of (groups ?? []).entries()) {
      try {
        compileMatcher(group.matcher);
      } catch (error) {
        throw new OptionsError(
          `hooks.${event}[${index}].matcher ${(error as Error).message}. Fix: write it without lookaround or backreferences (e.g. an alternation of the tool names).`,
        );
      }
    }
  }
}

/**
 * The Agent SDK's `hooks` option as forkloop runs it: PreToolUse, PostToolUse (PostToolUseFailure
 * for a failed call), PostToolBatch (after a reply's calls all have results), Stop,
 * SubagentStop, SessionStart, UserPromptSubmit, UserPromptExpansion, InstructionsLoaded, PreCompact and PostCompact become loop hooks, run by the agent
 * runner as settings hooks are (so they also run for sub-agents and batch items, in the parent,
 * and every answer is used the same way), SubagentStart too (its context reaches the sub-agent after
 * its task, in the event's words, as a settings hook's).
 * Callbacks get the Agent SDK's arguments `(input, toolUseID, { signal })`; a callback that throws
 * or times out counts as "no opinion" and is reported once.
 */
/**
 * A PermissionRequest hook's decision (a program's callback or a settings command) as the
 * permission checker takes it: decided by the hook, as the Agent SDK reports it (tool_result_meta:
 * source and reason hook).
 */
export function hookPermissionDecision(
  toolName: string,
  decision:
    | { readonly behavior: "allow"; readonly updatedInput?: Record<string, unknown> | undefined }
    | {
        readonly behavior: "deny";
        readonly message?: string | undefined;
        readonly interrupt?: boolean | undefined;
      },
): PermissionDecision {
  const decidedBy = { source: "hook", reasonType: "hook" } as const;
  if (decision.behavior === "allow") {
    return decision.updatedInput === undefined
      ? { behavior: "allow", decidedBy }
      : { behavior: "allow", updatedInput: decision.updatedInput, decidedBy };
  }
  const message = decision.message ?? `${toolName} was denied by a PermissionRequest hook`;
  return decision.interrupt === true
    ? { behavior: "deny", message, interrupt: true, decidedBy }
    : { behavior: "deny", message, decidedBy };
}

export class HookCallbacks {
  readonly #matchers: Matchers;
  readonly #session: HookSession;

  /** The current user prompt's id (`prompt_id`): absent until the first prompt, as in the Agent SDK. */
  #promptId: string | undefined;

  constructor(matchers: Matchers, session: HookSession) {
    this.#matchers = matchers;
    this.#session = session;
  }

  /** A new user prompt starts: every hook until the next one carries its `prompt_id`. */
  beginPrompt(): void {
    this.#promptId = randomUUID();
  }

  /** The current prompt's id, for the settings' hooks (the same `prompt_id`). */
  promptId(): string | undefined {
    return this.#promptId;
  }

  /** Runs every callback of `event` whose matcher accepts `subject`, in parallel. */
  async fire(
    event: FiredHookEvent,
    subject: string,
    input: HookInput,
    toolUseId: string | undefined,
    signal?: AbortSignal,
    beside?: "beside canUseTool",
  ): Promise<HookAnswer[]> {
    if (!this.has(event)) return [];
    // The messages yielded before this hook reach a program waiting in next() first (in
    // microtasks): the program sees them before the hook, as in the Agent SDK. PermissionRequest
    // is called at once, beside canUseTool: that call has already waited for them.
    if (beside === undefined) await new Promise<void>((resolve) => setImmediate(resolve));
    const runs: Promise<HookJSONOutput | undefined>[] = [];
    for (const matcher of this.#matchers[event] ?? []) {
      if (!matches(matcher.matcher, subject)) continue;
      for (const callback of matcher.hooks) {
        const controller = new AbortController();
        const onAbort = () => controller.abort(signal?.reason);
        signal?.addEventListener("abort", onAbort, { once: true });
        const timeoutMs = (matcher.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000;
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => {
            controller.abort("timeout");
            this.#session.onError(`hook ${event} timed out after ${timeoutMs / 1000} s`);
            resolve(undefined);
          }, timeoutMs);
        });
        let answered = false;
        const call = callback(input, toolUseId, { signal: controller.signal }).then(
          (output) => {
            answered = true;
            return output;
          },
          (error: unknown) => {
            this.#session.onError(
              `hook ${event} failed: ${error instanceof Error ? error.message : String(error)}`,
            );
            return undefined;
          },
        );
        runs.push(
          Promise.race([call, timeout])
            .finally(() => {
              clearTimeout(timer);
              signal?.removeEventListener("abort", onAbort);
            })
            .then((output) => {
              this.#session.onRan?.(event, answered, answerOf(output)[0]?.systemMessage);
              return output;
            }),
        );
      }
    }
    const outputs = await Promise.all(runs);
    return outputs.flatMap(answerOf).map((answer) => this.#forModel(answer, event));
  }

  /**
   * A callback's additionalContext as the model gets it: in its event's words, and over 10,000
   * characters saved to a file of the session's and replaced by a preview, as the Agent SDK does
   * (hookTextForModel, the settings hooks' own, R-K2).
   */
  #forModel(answer: HookAnswer, event: string): HookAnswer {
    const specific = answer.hookSpecificOutput;
    const text = specific?.additionalContext;
    if (specific === undefined || typeof text !== "string") return answer;
    const transcriptPath = this.#session.transcriptPath;
    const kept = hookTextForModel(text, { transcriptPath, event, source: "additionalContext" });
    return kept === text
      ? answer
      : { ...answer, hookSpecificOutput: { ...specific, additionalContext: kept } };
  }

  /**
   * Runs the PermissionRequest callbacks for a call that needs an answer: a deny among their
   * decisions wins, else an allow; undefined when none decided (canUseTool's answer counts).
   */
  async permissionRequest(
    toolName: string,
    toolInput: Record<string, unknown>,
    asked: { suggestions: unknown[]; mode: string; toolUseId: string; agentId: string; signal: AbortSignal },
  ): Promise<PermissionDecision | undefined> {
    const outputs = await this.fire(
      "PermissionRequest",
      toolName,
      {
        ...this.base(),
        // A sub-agent's call (asked in the parent for its worker) says whose it is, as the tool hooks do.
        ...this.#agentFields(asked.agentId),
        permission_mode: asked.mode,
        ...this.#turnFields(),
        hook_event_name: "PermissionRequest",
        tool_name: toolName,
        tool_input: toolInput,
        permission_suggestions: asked.suggestions,
      } as HookInput,
      asked.toolUseId,
      asked.signal,
      "beside canUseTool",
    );
    const decisions = outputs.flatMap((output) => {
      const decision = output.hookSpecificOutput?.decision;
      return output.hookSpecificOutput?.hookEventName === "PermissionRequest" && decision ? [decision] : [];
    });
    const decision = decisions.find((one) => one.behavior === "deny") ?? decisions[0];
    return decision === undefined ? undefined : hookPermissionDecision(toolName, decision);
  }

  /**
   * SessionEnd callbacks, once the session's last turn has ended (R-K2: as the Agent SDK documents
   * them; its 0.3.333 never calls a program's, like SessionStart's). Their output is not used.
   */
  async sessionEnd(reason: "other" | "clear" | "logout" | "prompt_input_exit"): Promise<void> {
    await this.fire(
      "SessionEnd",
      reason,
      { ...this.base(), hook_event_name: "SessionEnd", reason } as HookInput,
      undefined,
    );
  }

  has(event: HookEvent): boolean {
    return (this.#matchers[event] ?? []).some((matcher) => matcher.hooks.length > 0);
  }

  base(context?: ToolUseContext): BaseHookInput {
    return {
      session_id: this.#session.sessionId,
      transcript_path: this.#session.transcriptPath,
      cwd: context?.cwd ?? this.#session.cwd,
      ...(this.#promptId === undefined ? {} : { prompt_id: this.#promptId }),
      ...(context === undefined ? {} : { permission_mode: context.options.permissionMode }),
      ...this.#agentFields(context?.agentId),
    };
  }

  /** A compaction's hooks' common fields: the Agent SDK's carry no permission_mode (hooks-compact-failure). */
  #compactBase(context: ToolUseContext): BaseHookInput {
    const { permission_mode: _mode, ...base } = this.base(context);
    return base;
  }

  /**
   * StopFailure callbacks, for a main turn that ended on an API error, or a sub-agent's run (its
   * context: agent_id and agent_type) (R-K2: the Agent SDK calls a program's with the error's kind
   * and the reply's text, hooks-compact-failure). Their output is not used: the turn has ended.
   */
  async stopFailure(
    failure: { error: SDKAssistantMessageError; text: string },
    context?: ToolUseContext,
  ): Promise<void> {
    const { permission_mode: _mode, ...base } = this.base(context);
    await this.fire(
      "StopFailure",
      failure.error,
      {
        ...base,
        ...this.#turnFields(),
        hook_event_name: "StopFailure",
        error: failure.error,
        last_assistant_message: failure.text,
      } as HookInput,
      callbackId(),
      context?.abortController.signal,
    );
  }

  /** A sub-agent's `agent_id` and `agent_type` (none for the main agent's own events). */
  #agentFields(agentId: string | undefined): { agent_id?: string; agent_type?: string } {
    if (agentId === undefined || agentId === "main") return {};
    const agentType = this.#session.agentType(agentId);
    return { agent_id: agentId, ...(agentType === undefined ? {} : { agent_type: agentType }) };
  }

  /**
   * The fields the Agent SDK adds to the inputs of hooks that run within a model turn (the tool
   * hooks, Stop and SubagentStop): the effort its requests ask for.
   */
  #turnFields(): { effort?: { level: string } } {
    const level = this.#session.effort?.();
    return level === undefined ? {} : { effort: { level } };
  }

  /** The loop's view: PreToolUse / PostToolUse / Stop (SubagentStop for a sub-agent). */
  loopHooks(): LoopHooks {
    const hooks: { -readonly [Key in keyof LoopHooks]: LoopHooks[Key] } = {};
    if (this.has("PreToolUse")) {
      hooks.preToolUse = [
        async ({ toolName, toolInput, toolUseId, context }): Promise<PreToolUseOutcome> => {
          // The main loop's hook follows the message holding the call; a sub-agent's comes before
          // its message (the Agent SDK yields a sub-agent's messages as its transcript grows).
          if (context.agentId === "main") await this.#session.toolUseYielded?.(toolUseId);
          const outputs = await this.fire(
            "PreToolUse",
            toolName,
            {
              ...this.base(context),
              ...this.#turnFields(),
              hook_event_name: "PreToolUse",
              tool_name: toolName,
              tool_input: toolInput,
              tool_use_id: toolUseId,
            },
            toolUseId,
            context.abortController.signal,
          );
          return preToolUseOutcome(outputs);
        },
      ];
    }
    if (this.has("PostToolUse") || this.has("PostToolUseFailure")) {
      hooks.postToolUse = [
        async ({
          toolName,
          toolInput,
          toolUseId,
          context,
          result,
          durationMs,
        }): Promise<PostToolUseOutcome> => {
          const call = {
            ...this.base(context),
            ...this.#turnFields(),
            tool_name: toolName,
            tool_input: toolInput,
            tool_use_id: toolUseId,
            ...(durationMs === undefined ? {} : { duration_ms: durationMs }),
          };
          const signal = context.abortController.signal;
          // A failed call is a PostToolUseFailure with its error text, not a PostToolUse, as in the Agent SDK.
          const outputs =
            result.isError === true
              ? await this.fire(
                  "PostToolUseFailure",
                  toolName,
                  {
                    ...call,
                    hook_event_name: "PostToolUseFailure",
                    error: errorText(result.content),
                    is_interrupt: signal.aborted,
                  },
                  toolUseId,
                  signal,
                )
              : await this.fire(
                  "PostToolUse",
                  toolName,
                  {
                    ...call,
                    hook_event_name: "PostToolUse",
                    tool_response: toolUseResultOf(result),
                  },
                  toolUseId,
                  signal,
                );
          const context_ = outputs.flatMap((output) => [
            ...(output.hookSpecificOutput?.additionalContext === undefined
              ? []
              : [output.hookSpecificOutput.additionalContext]),
            ...(output.decision === "block" && output.reason !== undefined ? [output.reason] : []),
          ]);
          return {
            ...(context_.length === 0 ? {} : { additionalContext: context_.join("\n") }),
            ...stopFields(outputs),
          };
        },
      ];
    }
    if (this.has("PostToolBatch")) {
      hooks.postToolBatch = [
        async ({ calls, context }): Promise<PostToolBatchOutcome> => {
          const outputs = await this.fire(
            "PostToolBatch",
            "",
            {
              ...this.base(context),
              ...this.#turnFields(),
              hook_event_name: "PostToolBatch",
              tool_calls: calls.map((call) => ({
                tool_name: call.toolName,
                tool_input: call.toolInput,
                tool_use_id: call.toolUseId,
                tool_response: call.toolResponse,
              })),
            },
            // The Agent SDK's id for a batch's callback names no one call.
            `hook-${randomUUID()}`,
            context.abortController.signal,
          );
          return additionalContext(outputs);
        },
      ];
    }
    if (this.has("SessionStart")) {
      hooks.sessionStart = [
        async ({ source, model, context, resumedCache }): Promise<SessionStartOutcome> => {
          const outputs = await this.fire(
            "SessionStart",
            source,
            {
              ...this.base(context),
              hook_event_name: "SessionStart",
              source,
              model,
              ...(resumedCache === undefined
                ? {}
                : {
                    seconds_since_last_response: resumedCache.secondsSinceLastResponse,
                    context_tokens: resumedCache.contextTokens,
                    prompt_cache_likely_expired: resumedCache.promptCacheLikelyExpired,
                    estimated_cache_write_usd: resumedCache.estimatedCacheWriteUsd,
                  }),
            },
            callbackId(),
            context.abortController.signal,
          );
          return additionalContext(outputs);
        },
      ];
    }
    if (this.has("UserPromptSubmit")) {
      hooks.userPromptSubmit = [
        async ({ prompt, context }): Promise<UserPromptSubmitOutcome> => {
          const outputs = await this.fire(
            "UserPromptSubmit",
            "",
            { ...this.base(context), hook_event_name: "UserPromptSubmit", prompt },
            callbackId(),
            context.abortController.signal,
          );
          return promptOutcome(outputs, "UserPromptSubmit");
        },
      ];
    }
    if (this.has("UserPromptExpansion")) {
      hooks.userPromptExpansion = [
        async ({ expansion, context }): Promise<UserPromptExpansionOutcome> => {
          const outputs = await this.fire(
            "UserPromptExpansion",
            expansion.commandName,
            {
              ...this.base(context),
              hook_event_name: "UserPromptExpansion",
              expansion_type: expansion.expansionType,
              command_name: expansion.commandName,
              command_args: expansion.commandArgs,
              ...(expansion.commandSource === undefined ? {} : { command_source: expansion.commandSource }),
              prompt: expansion.typedPrompt,
            },
            callbackId(),
            context.abortController.signal,
          );
          return promptOutcome(outputs, "UserPromptExpansion");
        },
      ];
    }
    if (this.has("InstructionsLoaded")) {
      hooks.instructionsLoaded = [
        async ({ filePath, memoryType, loadReason, parentFilePath, context }) => {
          // Before the session's first prompt: no prompt_id, as in Claude Code.
          const { prompt_id: _before, ...common } = this.base();
          await this.fire(
            "InstructionsLoaded",
            loadReason,
            {
              ...common,
              cwd: context.cwd,
              hook_event_name: "InstructionsLoaded",
              file_path: filePath,
              memory_type: memoryType,
              load_reason: loadReason,
              ...(parentFilePath === undefined ? {} : { parent_file_path: parentFilePath }),
            },
            callbackId(),
            context.abortController.signal,
          );
          // Claude Code gives InstructionsLoaded no control: an observer.
          return {};
        },
      ];
    }
    if (this.has("PreCompact")) {
      hooks.preCompact = [
        async ({ trigger, customInstructions, context }) => {
          await this.fire(
            "PreCompact",
            trigger,
            {
              ...this.#compactBase(context),
              hook_event_name: "PreCompact",
              trigger,
              custom_instructions: customInstructions === "" ? null : customInstructions,
            },
            callbackId(),
            context.abortController.signal,
          );
          // Claude Code gives PreCompact no control: an observer.
          return {};
        },
      ];
    }
    if (this.has("PostCompact")) {
      hooks.postCompact = [
        async ({ trigger, compactSummary, context }) => {
          await this.fire(
            "PostCompact",
            trigger,
            {
              ...this.#compactBase(context),
              hook_event_name: "PostCompact",
              trigger,
              compact_summary: compactSummary,
            },
            callbackId(),
            context.abortController.signal,
          );
          // An observer, as PreCompact.
          return {};
        },
      ];
    }
    if (this.has("StopFailure")) {
      // A sub-agent's (its runner fires it); a main turn's is stopFailure() above.
      hooks.stopFailure = [
        async ({ apiError, text, context }) => {
          await this.stopFailure({ error: assistantErrorKind(apiError), text }, context);
          return {};
        },
      ];
    }
    if (this.has("SubagentStart")) {
      hooks.subagentStart = [
        async ({ agentType, toolUseId, context }): Promise<SubagentStartOutcome> => {
          // After the message holding the call that started it (and task_started), as in the Agent SDK.
          if (toolUseId !== undefined) await this.#session.toolUseYielded?.(toolUseId);
          const outputs = await this.fire(
            "SubagentStart",
            agentType,
            {
              ...this.base(),
              hook_event_name: "SubagentStart",
              agent_id: context.agentId,
              agent_type: agentType,
            },
            callbackId(),
            context.abortController.signal,
          );
          return additionalContext(outputs);
        },
      ];
    }
    if (this.has("Stop") || this.has("SubagentStop")) {
      hooks.stop = [
        async ({ messages, stopHookActive, context }): Promise<StopHookOutcome> => {
          const last = lastAssistantText(messages);
          const main = context.agentId === "main";
          const agentType = this.#session.agentType(context.agentId) ?? "general-purpose";
          // What still runs in the background (the Agent SDK's background_tasks); forkloop
          // schedules no crons (session_crons).
          const waiting = {
            background_tasks: runningBackgroundTasks(context.agentState),
            session_crons: [],
          };
          const outputs = main
            ? await this.fire(
                "Stop",
                "",
                {
                  ...this.base(context),
                  ...this.#turnFields(),
                  hook_event_name: "Stop",
                  stop_hook_active: stopHookActive,
                  ...(last === undefined ? {} : { last_assistant_message: last }),
                  ...waiting,
                },
                callbackId(),
                context.abortController.signal,
              )
            : await this.fire(
                "SubagentStop",
                agentType,
                {
                  ...this.base(context),
                  ...this.#turnFields(),
                  hook_event_name: "SubagentStop",
                  stop_hook_active: stopHookActive,
                  agent_id: context.agentId,
                  agent_transcript_path: this.#session.subAgentTranscript(context.agentId),
                  agent_type: agentType,
                  ...(last === undefined ? {} : { last_assistant_message: last }),
                  ...waiting,
                },
                callbackId(),
                context.abortController.signal,
              );
          const blocking = outputs.flatMap((output) =>
            output.decision === "block" ? [output.reason ?? "a Stop hook asked to continue"] : [],
          );
          const stop = stopFields(outputs);
          return {
            ...(blocking.length === 0 ? {} : { blockingErrors: blocking }),
            ...(stop.continue === false ? { preventContinuation: true } : {}),
            ...(stop.stopReason === undefined ? {} : { stopReason: stop.stopReason }),
          };
        },
      ];
    }
    return hooks;
  }
}

/**
 * The loop's PreToolUse hooks (settings files' and callbacks'), each deny also recorded: the
 * Agent SDK lists a call a hook denied in `result.permission_denials`, as one a rule denied. The
 * loop stops asking hooks at the first deny, so a call is recorded once.
 */
export function recordingHookDenials(
  hooks: LoopHooks,
  record: (toolName: string, toolUseId: string, input: Record<string, unknown>) => void,
): LoopHooks {
  if (hooks.preToolUse === undefined) return hooks;
  return {
    ...hooks,
    preToolUse: hooks.preToolUse.map((hook) => async (input) => {
      const outcome = await hook(input);
      if (outcome.decision === "deny") record(input.toolName, input.toolUseId, input.toolInput);
      return outcome;
    }),
  };
}

/** PreToolUse answers merged: deny beats ask beats allow (the Agent SDK's precedence). */
function preToolUseOutcome(outputs: readonly HookAnswer[]): PreToolUseOutcome {
  let decision: "allow" | "deny" | "ask" | undefined;
  let reason: string | undefined;
  let updatedInput: Record<string, unknown> | undefined;
  const rank = { allow: 1, ask: 2, deny: 3 } as const;
  for (const output of outputs) {
    const specific = output.hookSpecificOutput;
    const said =
      (specific?.permissionDecision === "defer" ? "ask" : specific?.permissionDecision) ??
      (output.decision === "block" ? "deny" : output.decision === "approve" ? "allow" : undefined);
    if (said !== undefined && (decision === undefined || rank[said] > rank[decision])) {
      decision = said;
      reason = specific?.permissionDecisionReason ?? output.reason;
    }
    if (specific?.updatedInput !== undefined) updatedInput = specific.updatedInput;
  }
  return {
    ...(decision === undefined ? {} : { decision }),
    ...(reason === undefined ? {} : { reason }),
    ...(updatedInput === undefined || decision === "deny" ? {} : { updatedInput }),
    ...stopFields(outputs),
  };
}

/** What a prompt's callbacks decided (UserPromptSubmit, UserPromptExpansion): a block drops it, context joins it. */
function promptOutcome(outputs: readonly HookAnswer[], event: string): UserPromptSubmitOutcome {
  const block = outputs.find((output) => output.decision === "block");
  return {
    ...(block === undefined ? {} : { blockReason: block.reason ?? `a ${event} hook blocked it` }),
    ...stopFields(outputs),
    ...additionalContext(outputs),
  };
}

function stopFields(outputs: readonly HookAnswer[]): { continue?: false; stopReason?: string } {
  const stopping = outputs.find((output) => output.continue === false);
  if (stopping === undefined) return {};
  return {
    continue: false,
    ...(stopping.stopReason === undefined ? {} : { stopReason: stopping.stopReason }),
  };
}

/** What the callbacks added for the model (SessionStart, SubagentStart, UserPromptSubmit, UserPromptExpansion, PostToolBatch), as `#forModel` left it. */
function additionalContext(outputs: readonly HookAnswer[]): { additionalContext?: string[] } {
  const context = outputs.flatMap((output) => output.hookSpecificOutput?.additionalContext ?? []);
  return context.length === 0 ? {} : { additionalContext: context };
}

/** A failed tool result's text (its text blocks), as PostToolUseFailure's `error`. */
function errorText(content: string | readonly { type: string; text?: string }[]): string {
  if (typeof content === "string") return content;
  return content.flatMap((block) => (block.type === "text" && block.text ? [block.text] : [])).join("\n");
}

/**
 * The second argument of a callback for an event without a tool call: the Agent SDK passes an id
 * of its own for each call there (never null).
 */
function callbackId(): string {
  return randomUUID();
}
