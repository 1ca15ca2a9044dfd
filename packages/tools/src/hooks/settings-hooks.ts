import type {
  LoopHooks,
  PostToolUseInput,
  PostToolUseOutcome,
  PreToolUseInput,
  PreToolUseOutcome,
  StopHookInput,
  StopHookOutcome,
} from "@forkloop/loop-core";
import type { HookEvent, Settings } from "../settings/settings-schema.js";
import { compileMatcher } from "./hook-matcher.js";
import { type HookEventOutcome, runHookEvent } from "./run-hook-event.js";

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
}

/**
 * Adapts the shell hooks of settings (Claude Code's protocol, see runHookEvent) to the loop's
 * LoopHooks: PreToolUse can deny (exit 2 / `deny`), ask, allow, rewrite the input or stop the loop
 * (`continue: false` → terminal `hook_stopped`); PostToolUse feedback (exit 2 stderr, `block`
 * reason, additionalContext) is appended to the tool_result; a blocking Stop hook keeps the loop
 * going with its reason (R-L15), `continue: false` prevents continuation. A sub-agent's stop runs
 * the SubagentStop hooks instead of Stop.
 */
export function createSettingsHooks(settings: Settings, options: SettingsHooksOptions): LoopHooks {
  const base = (context: PreToolUseInput["context"]) => ({
    cwd: context.cwd,
    sessionId: options.sessionId,
    permissionMode: context.options.permissionMode,
    signal: context.abortController.signal,
    ...(options.transcriptPath === undefined ? {} : { transcriptPath: options.transcriptPath }),
  });
  const report = (outcome: HookEventOutcome): void => {
    for (const message of outcome.errors)
      options.onNotice?.({ event: outcome.event, kind: "error", message });
    for (const message of outcome.systemMessages)
      options.onNotice?.({ event: outcome.event, kind: "systemMessage", message });
  };

  const preToolUse = async (input: PreToolUseInput): Promise<PreToolUseOutcome> => {
    const outcome = await runHookEvent("PreToolUse", settings, {
      ...base(input.context),
      toolName: input.toolName,
      toolInput: input.toolInput,
      toolUseId: input.toolUseId,
    });
    report(outcome);
    const reason = outcome.permissionDecisionReason ?? (outcome.blockReasons.join("\n") || undefined);
    return {
      ...(outcome.permissionDecision === undefined ? {} : { decision: outcome.permissionDecision }),
      ...(reason === undefined ? {} : { reason }),
      ...(outcome.updatedInput === undefined ? {} : { updatedInput: outcome.updatedInput }),
      ...stopFields(outcome),
    };
  };

  const postToolUse = async (input: PostToolUseInput): Promise<PostToolUseOutcome> => {
    const outcome = await runHookEvent("PostToolUse", settings, {
      ...base(input.context),
      toolName: input.toolName,
      toolInput: input.toolInput,
      toolUseId: input.toolUseId,
      toolResponse: { content: input.result.content, is_error: input.result.isError === true },
    });
    report(outcome);
    const feedback = [...outcome.blockReasons, ...outcome.additionalContext].join("\n\n");
    return { ...(feedback === "" ? {} : { additionalContext: feedback }), ...stopFields(outcome) };
  };

  const stop = async (input: StopHookInput): Promise<StopHookOutcome> => {
    const event = input.context.agentId === "main" ? "Stop" : "SubagentStop";
    const outcome = await runHookEvent(event, settings, {
      ...base(input.context),
      stopHookActive: input.stopHookActive,
    });
    report(outcome);
    return {
      ...(outcome.blockReasons.length === 0 ? {} : { blockingErrors: outcome.blockReasons }),
      ...(outcome.continue ? {} : { preventContinuation: true }),
      ...(outcome.stopReason === undefined ? {} : { stopReason: outcome.stopReason }),
    };
  };

  // Only events that have hooks get a function, so a loop with no hooks spawns nothing.
  const has = (event: HookEvent): boolean => (settings.hooks[event]?.length ?? 0) > 0;
  return {
    ...(has("PreToolUse") ? { preToolUse: [preToolUse] } : {}),
    ...(has("PostToolUse") ? { postToolUse: [postToolUse] } : {}),
    ...(has("Stop") || has("SubagentStop") ? { stop: [stop] } : {}),
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
  const preToolUse = hooks.flatMap((set) => set.preToolUse ?? []);
  const postToolUse = hooks.flatMap((set) => set.postToolUse ?? []);
  const stop = hooks.flatMap((set) => set.stop ?? []);
  return {
    ...(preToolUse.length === 0 ? {} : { preToolUse }),
    ...(postToolUse.length === 0 ? {} : { postToolUse }),
    ...(stop.length === 0 ? {} : { stop }),
  };
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
