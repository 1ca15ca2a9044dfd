import { randomUUID } from "node:crypto";
import type { PermissionMode, ResumedCache } from "@forkloop/loop-core";
import { runInProcessGroup } from "../process-group.js";
import type { HookCommandSetting, HookEvent, Settings } from "../settings/settings-schema.js";
import { toolEnvironment } from "../tool-environment.js";
import { compileMatcher } from "./hook-matcher.js";
import { type HookTextSource, hookTextForModel } from "./hook-output-file.js";

/** Claude Code's default hook timeout. */
const HOOK_DEFAULT_TIMEOUT_SECONDS = 60;
/** Hook output kept per stream; hooks answer in a few lines of JSON. */
const HOOK_MAX_OUTPUT_CHARS = 100_000;

/** What a hook event is about; the fields that do not apply to an event are ignored. */
export interface HookEventInput {
  readonly cwd: string;
  readonly sessionId: string;
  readonly transcriptPath?: string;
  readonly permissionMode?: PermissionMode;
  /** The user prompt the event belongs to (`prompt_id`; every event but SessionStart). */
  readonly promptId?: string;
  /** The effort the session's requests ask for (`effort.level` of the events within a model turn). */
  readonly effort?: string;
  /** PostToolUse / PostToolUseFailure: how long the call took. */
  readonly durationMs?: number;
  /** Stop / SubagentStop: what the agent still runs in the background. */
  readonly backgroundTasks?: readonly Record<string, unknown>[];
  readonly toolName?: string;
  readonly toolInput?: Record<string, unknown>;
  readonly toolUseId?: string;
  /** PostToolUse: the tool's result. */
  readonly toolResponse?: unknown;
  /** PostToolUseFailure: the failed call's error text, and whether a stop (Ctrl+C) ended it. */
  readonly error?: string;
  readonly isInterrupt?: boolean;
  /** PostToolBatch: the reply's calls, each with what the model is sent back. */
  readonly toolCalls?: readonly {
    readonly tool_name: string;
    readonly tool_input: Record<string, unknown>;
    readonly tool_use_id: string;
    readonly tool_response: unknown;
  }[];
  /** PermissionRequest: the changes that would let such calls run without asking. */
  readonly permissionSuggestions?: readonly unknown[];
  /** MessageDisplay: the turn, the reply and its text (shown whole: one final delta). */
  readonly turnId?: string;
  readonly messageId?: string;
  readonly text?: string;
  /** Stop / SubagentStop: true when this stop follows a stop-hook retry (R-L15). */
  readonly stopHookActive?: boolean;
  /** UserPromptSubmit. */
  readonly prompt?: string;
  /** PreCompact, PostCompact (also what their matcher sees). */
  readonly trigger?: "manual" | "auto";
  /** PreCompact: a `/compact <text>` argument (null when there is none, as Claude Code sends it). */
  readonly customInstructions?: string;
  /** PostCompact: the summary. */
  readonly compactSummary?: string;
  /** UserPromptExpansion: the command the typed prompt (`prompt`) ran (its matcher sees the name). */
  readonly expansion?: {
    readonly expansionType: "slash_command";
    readonly commandName: string;
    readonly commandArgs: string;
    readonly commandSource?: string;
  };
  /** InstructionsLoaded: the memory file (its matcher sees `loadReason`). */
  readonly instructions?: {
    readonly filePath: string;
    readonly memoryType: string;
    readonly loadReason: string;
    readonly parentFilePath?: string;
  };
  /** SessionStart (also what its matcher sees). */
  readonly source?: "startup" | "resume" | "clear" | "compact";
  /** SessionStart: the session's model. */
  readonly model?: string;
  /** SessionStart `resume`: the resumed transcript's prompt cache (its last reply's age and size). */
  readonly resumedCache?: ResumedCache;
  /** Stop / SubagentStop: the text of the agent's last reply; StopFailure: the error's text. */
  readonly lastAssistantMessage?: string;
  /** StopFailure: the kind of API error that ended the turn (also what its matcher sees). */
  readonly failure?: StopFailureKind;
  /**
   * A sub-agent's events (SubagentStart, SubagentStop, its tool calls): which sub-agent and its
   * type, as Claude Code's agent_id / agent_type; SubagentStop also its own transcript.
   */
  readonly agentId?: string;
  readonly agentType?: string;
  readonly agentTranscriptPath?: string;
  /** SessionEnd: why the session ended (Claude Code's `other` for a finished headless run). */
  readonly reason?: "clear" | "logout" | "prompt_input_exit" | "other";
  readonly signal?: AbortSignal;
  /** Told as each hook command starts and ends (Claude Code's `--include-hook-events`). */
  readonly onRun?: HookRunObserver;
}

/**
 * One hook command's run as it starts and as it ends, by `id`. `name` is the event and what its
 * matcher saw, as Claude Code names it: `PreToolUse:Read`, `SessionStart:startup`, `Stop`.
 */
export type HookRunReport = HookRun &
  (
    | { readonly phase: "started" }
    | {
        readonly phase: "ended";
        readonly result: HookCommandResult;
        /** The run's stop (Ctrl+C) ended it, not the command. */
        readonly cancelled: boolean;
      }
  );

interface HookRun {
  readonly id: string;
  readonly name: string;
  readonly event: HookEvent;
  /** The tool call a tool event is about, and the sub-agent that made it (absent: the main agent). */
  readonly toolUseId?: string;
  readonly agentId?: string;
}

export type HookRunObserver = (report: HookRunReport) => void;

/** One hook command's run. */
export interface HookCommandResult {
  readonly command: string;
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
}

/** All matching hook commands of one event, combined (they run in parallel, as in Claude Code). */
export interface HookEventOutcome {
  readonly event: HookEvent;
  readonly results: readonly HookCommandResult[];
  /** Exit code 2 or `decision: "block"` (or a PreToolUse `deny`) from any hook. */
  readonly blocked: boolean;
  /** Why: stderr of exit-2 hooks, `reason` / `permissionDecisionReason` of JSON answers. */
  readonly blockReasons: readonly string[];
  /** PreToolUse: the most restrictive answer (deny > ask > allow). */
  readonly permissionDecision?: "allow" | "deny" | "ask";
  readonly permissionDecisionReason?: string;
  /**
   * The first exit-2 hook's blocking error as Claude Code words it, `[<command>]: <stderr>` (its
   * stderr as written), which a PreToolUse denial gives the model after `PreToolUse:<tool> hook error: `.
   */
  readonly blockingError?: string;
  /** PreToolUse: replacement tool input (the last hook that gave one wins). */
  readonly updatedInput?: Record<string, unknown>;
  /** PermissionRequest: the hooks' answer (`hookSpecificOutput.decision`; a deny among them wins). */
  readonly permissionRequestDecision?: PermissionRequestHookDecision;
  /** False when a hook answered `continue: false`: the loop stops. */
  readonly continue: boolean;
  readonly stopReason?: string;
  /** Text for the model: `additionalContext`, and plain stdout of UserPromptSubmit/UserPromptExpansion/SessionStart hooks. */
  readonly additionalContext: readonly string[];
  /** `systemMessage` fields: shown to the user, not the model. */
  readonly systemMessages: readonly string[];
  /** Non-blocking failures (other exit codes, timeouts, bad JSON): logged, the run goes on. */
  readonly errors: readonly string[];
}

/** StopFailure's `error`: the kind of API error that ended a turn, as Claude Code names it. */
export type StopFailureKind =
  | "model_not_found"
  | "rate_limit"
  | "authentication_failed"
  | "billing_error"
  | "invalid_request"
  | "server_error"
  | "unknown";

/**
 * The StopFailure kind of an API error (its HTTP status; null when no response came). A plain 400
 * is "unknown", as Claude Code 2.1.332 names it (hooks-stop-failure-invalid-request; 402, 403 and
 * 404 as here).
 */
export function stopFailureKind(status: number | null): StopFailureKind {
  if (status === 404) return "model_not_found";
  if (status === 429) return "rate_limit";
  if (status === 401 || status === 403) return "authentication_failed";
  if (status === 402) return "billing_error";
  if (status === 413) return "invalid_request";
  if (status !== null && status >= 500) return "server_error";
  return "unknown";
}

/** A PermissionRequest hook's `hookSpecificOutput.decision`, as Claude Code reads it. */
export type PermissionRequestHookDecision =
  | { readonly behavior: "allow"; readonly updatedInput?: Record<string, unknown> }
  | { readonly behavior: "deny"; readonly message?: string; readonly interrupt?: boolean };

/**
 * Runs the settings' shell hooks for one event with Claude Code's protocol: the event as JSON on
 * stdin; exit 0 = success (stdout parsed when it is JSON); exit 2 = block, stderr is the reason;
 * any other exit = a non-blocking error. A hook past its timeout (default 60 s) is killed with
 * its whole process group and counts as a non-blocking error.
 */
export async function runHookEvent(
  event: HookEvent,
  settings: Settings,
  input: HookEventInput,
): Promise<HookEventOutcome> {
  const matchValue =
    event === "PreCompact" || event === "PostCompact"
      ? input.trigger
      : event === "SessionStart"
        ? input.source
        : event === "SubagentStart"
          ? input.agentType
          : event === "InstructionsLoaded"
            ? input.instructions?.loadReason
            : event === "UserPromptExpansion"
              ? input.expansion?.commandName
              : event === "StopFailure"
                ? input.failure
                : input.toolName;
  const usesMatcher =
    event === "InstructionsLoaded" ||
    event === "UserPromptExpansion" ||
    event === "StopFailure" ||
    event === "PreToolUse" ||
    event === "PermissionRequest" ||
    event === "PostToolUse" ||
    event === "PostToolUseFailure" ||
    event === "PreCompact" ||
    event === "PostCompact" ||
    event === "SessionStart" ||
    event === "SubagentStart";
  const commands = (settings.hooks[event] ?? [])
    .filter((group) => !usesMatcher || compileMatcher(group.matcher)(matchValue))
    .flatMap((group) => group.hooks);
  const stdin = JSON.stringify(hookPayload(event, input));
  const name = usesMatcher && matchValue !== undefined ? `${event}:${matchValue}` : event;
  const about = {
    ...(input.toolUseId === undefined ? {} : { toolUseId: input.toolUseId }),
    ...(input.agentId === undefined ? {} : { agentId: input.agentId }),
  };
  const results = await Promise.all(
    commands.map(async (hook) => {
      const run = { id: randomUUID(), name, event, ...about };
      input.onRun?.({ phase: "started", ...run });
      const result = await runHookCommand(hook, stdin, input, settings.env);
      input.onRun?.({ phase: "ended", ...run, result, cancelled: input.signal?.aborted === true });
      return result;
    }),
  );
  return combine(event, results, (text, source) =>
    hookTextForModel(text, {
      transcriptPath: input.transcriptPath,
      event,
      source,
      sessionSource: input.source,
    }),
  );
}

/** The events whose plain stdout Claude Code gives the model (hooks-prompt-expansion-context). */
const PLAIN_STDOUT_FOR_MODEL: ReadonlySet<HookEvent> = new Set([
  "SessionStart",
  "UserPromptSubmit",
  "UserPromptExpansion",
]);

/**
 * The events that run within a model turn: Claude Code gives them the turn's effort (StopFailure's
 * too, a main turn's or a sub-agent's: hooks-stop-failure-invalid-request, hooks-subagent-api-error).
 */
const TURN_EVENTS: ReadonlySet<HookEvent> = new Set([
  "PreToolUse",
  "PermissionRequest",
  "PostToolUse",
  "PostToolUseFailure",
  "PostToolBatch",
  "Stop",
  "SubagentStop",
  "StopFailure",
]);

function hookPayload(event: HookEvent, input: HookEventInput): Record<string, unknown> {
  const payload: Record<string, unknown> = {
    session_id: input.sessionId,
    transcript_path: input.transcriptPath ?? "",
    cwd: input.cwd,
    hook_event_name: event,
  };
  // SessionStart (but a compaction's, within the prompt that compacted) and InstructionsLoaded
  // come before the session's first prompt.
  const beforePrompt =
    event === "InstructionsLoaded" || (event === "SessionStart" && input.source !== "compact");
  if (input.promptId !== undefined && !beforePrompt) payload.prompt_id = input.promptId;
  if (
    input.permissionMode !== undefined &&
    event !== "SubagentStart" &&
    event !== "InstructionsLoaded" &&
    event !== "SessionEnd" &&
    event !== "MessageDisplay" &&
    event !== "StopFailure" &&
    event !== "PreCompact" &&
    event !== "PostCompact"
  )
    payload.permission_mode = input.permissionMode;
  // A sub-agent's events say which sub-agent, as Claude Code's do (a Stop is the main agent's).
  if (input.agentId !== undefined && event !== "Stop") {
    payload.agent_id = input.agentId;
    if (input.agentType !== undefined) payload.agent_type = input.agentType;
  }
  if (input.effort !== undefined && TURN_EVENTS.has(event)) payload.effort = { level: input.effort };
  switch (event) {
    case "PreToolUse":
    case "PostToolUse":
    case "PostToolUseFailure":
      payload.tool_name = input.toolName;
      payload.tool_input = input.toolInput ?? {};
      if (input.toolUseId !== undefined) payload.tool_use_id = input.toolUseId;
      if (event === "PostToolUse") payload.tool_response = input.toolResponse ?? null;
      if (event === "PostToolUseFailure") {
        payload.error = input.error ?? "";
        payload.is_interrupt = input.isInterrupt === true;
      }
      if (event !== "PreToolUse" && input.durationMs !== undefined) payload.duration_ms = input.durationMs;
      break;
    case "PermissionRequest":
      payload.tool_name = input.toolName;
      payload.tool_input = input.toolInput ?? {};
      payload.permission_suggestions = input.permissionSuggestions ?? [];
      break;
    case "PostToolBatch":
      payload.tool_calls = input.toolCalls ?? [];
      break;
    case "Stop":
    case "SubagentStop":
      payload.stop_hook_active = input.stopHookActive === true;
      if (input.lastAssistantMessage !== undefined)
        payload.last_assistant_message = input.lastAssistantMessage;
      if (event === "SubagentStop" && input.agentId !== undefined)
        payload.agent_transcript_path = input.agentTranscriptPath ?? "";
      // forkloop schedules no crons.
      payload.background_tasks = input.backgroundTasks ?? [];
      payload.session_crons = [];
      break;
    case "SubagentStart":
      break;
    case "SessionEnd":
      payload.reason = input.reason ?? "other";
      break;
    case "MessageDisplay":
      payload.turn_id = input.turnId ?? "";
      payload.message_id = input.messageId ?? "";
      payload.index = 0;
      payload.final = true;
      payload.delta = input.text ?? "";
      break;
    case "UserPromptSubmit":
      payload.prompt = input.prompt ?? "";
      break;
    case "UserPromptExpansion":
      return withFields(payload, {
        expansion_type: input.expansion?.expansionType ?? "slash_command",
        command_name: input.expansion?.commandName ?? "",
        command_args: input.expansion?.commandArgs ?? "",
        command_source: input.expansion?.commandSource,
        prompt: input.prompt ?? "",
      });
    case "InstructionsLoaded":
      return withFields(payload, {
        file_path: input.instructions?.filePath ?? "",
        memory_type: input.instructions?.memoryType ?? "Project",
        load_reason: input.instructions?.loadReason ?? "session_start",
        parent_file_path: input.instructions?.parentFilePath,
      });
    case "PreCompact":
      return withFields(payload, {
        trigger: input.trigger ?? "auto",
        custom_instructions: input.customInstructions || null,
      });
    case "PostCompact":
      return withFields(payload, {
        trigger: input.trigger ?? "auto",
        compact_summary: input.compactSummary ?? "",
      });
    case "SessionStart":
      return withFields(payload, {
        source: input.source ?? "startup",
        model: input.model,
        seconds_since_last_response: input.resumedCache?.secondsSinceLastResponse,
        context_tokens: input.resumedCache?.contextTokens,
        prompt_cache_likely_expired: input.resumedCache?.promptCacheLikelyExpired,
        estimated_cache_write_usd: input.resumedCache?.estimatedCacheWriteUsd,
      });
    case "StopFailure":
      return withFields(payload, {
        error: input.failure ?? "unknown",
        last_assistant_message: input.lastAssistantMessage,
      });
    default: {
      const unreachable: never = event;
      throw new Error(`unknown hook event ${String(unreachable)}`);
    }
  }
  return payload;
}

/** The payload with each field that has a value (an undefined one is left out, as Claude Code does). */
function withFields(
  payload: Record<string, unknown>,
  fields: Record<string, unknown>,
): Record<string, unknown> {
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) payload[key] = value;
  return payload;
}

async function runHookCommand(
  hook: HookCommandSetting,
  stdin: string,
  input: HookEventInput,
  explicitEnv: Readonly<Record<string, string>> | undefined,
): Promise<HookCommandResult> {
  const timeoutSeconds = hook.timeout ?? HOOK_DEFAULT_TIMEOUT_SECONDS;
  try {
    const run = await runInProcessGroup(hook.command, {
      cwd: input.cwd,
      timeoutMs: timeoutSeconds * 1000,
      stdin,
      // Without the model credentials (R-S4); Claude Code's variable, so existing hook scripts find the project.
      env: toolEnvironment(process.env, explicitEnv, {
        CLAUDE_PROJECT_DIR: input.cwd,
        FORKLOOP_PROJECT_DIR: input.cwd,
      }),
      maxOutputChars: HOOK_MAX_OUTPUT_CHARS,
      ...(input.signal === undefined ? {} : { signal: input.signal }),
    });
    return {
      command: hook.command,
      exitCode: run.exitCode,
      stdout: run.stdout,
      stderr: run.stderr,
      timedOut: run.timedOut,
    };
  } catch (error) {
    return {
      command: hook.command,
      exitCode: null,
      stdout: "",
      stderr: (error as Error).message,
      timedOut: false,
    };
  }
}

interface HookJsonOutput {
  readonly continue?: unknown;
  readonly stopReason?: unknown;
  readonly systemMessage?: unknown;
  readonly decision?: unknown;
  readonly reason?: unknown;
  readonly updatedInput?: unknown;
  readonly hookSpecificOutput?: {
    readonly permissionDecision?: unknown;
    readonly permissionDecisionReason?: unknown;
    readonly updatedInput?: unknown;
    readonly additionalContext?: unknown;
    readonly decision?: unknown;
  };
}

const DECISION_RANK = { allow: 0, ask: 1, deny: 2 } as const;

/** `forModel`: a hook's text as the model gets it (its event's words, a long one saved to a file: hookTextForModel). */
function combine(
  event: HookEvent,
  results: readonly HookCommandResult[],
  forModel: (text: string, source: HookTextSource) => string,
): HookEventOutcome {
  const blockReasons: string[] = [];
  const additionalContext: string[] = [];
  const systemMessages: string[] = [];
  const errors: string[] = [];
  let blocked = false;
  let keepGoing = true;
  let stopReason: string | undefined;
  let permissionDecision: "allow" | "deny" | "ask" | undefined;
  let permissionDecisionReason: string | undefined;
  let updatedInput: Record<string, unknown> | undefined;
  let blockingError: string | undefined;
  let permissionRequestDecision: PermissionRequestHookDecision | undefined;

  const decide = (decision: "allow" | "deny" | "ask", reason: string | undefined): void => {
    if (permissionDecision === undefined || DECISION_RANK[decision] >= DECISION_RANK[permissionDecision]) {
      permissionDecision = decision;
      permissionDecisionReason = reason;
    }
  };
  const block = (reason: string): void => {
    blocked = true;
    blockReasons.push(reason);
    if (event === "PreToolUse") decide("deny", reason);
  };

  for (const result of results) {
    const name = `hook \`${result.command}\``;
    if (result.timedOut) {
      errors.push(`${name} timed out and was killed`);
      continue;
    }
    if (result.exitCode === 2) {
      blockingError ??= `[${result.command}]: ${result.stderr}`;
      block(result.stderr.trim() || `${name} blocked this (exit code 2) without saying why`);
      continue;
    }
    if (result.exitCode !== 0) {
      const detail = result.stderr.trim();
      errors.push(`${name} failed with exit code ${result.exitCode ?? "null"}${detail ? `: ${detail}` : ""}`);
      continue;
    }
    const stdout = result.stdout.trim();
    const json = parseJsonObject(stdout);
    if (json === undefined) {
      // Plain stdout becomes context only where Claude Code feeds it to the model (not
      // SubagentStart's: hooks-subagent-start-context).
      if (stdout && PLAIN_STDOUT_FOR_MODEL.has(event)) additionalContext.push(forModel(stdout, "stdout"));
      continue;
    }
    if (json.continue === false) {
      keepGoing = false;
      if (typeof json.stopReason === "string") stopReason = json.stopReason;
    }
    if (typeof json.systemMessage === "string") systemMessages.push(json.systemMessage);
    const reason = typeof json.reason === "string" ? json.reason : undefined;
    if (json.decision === "block") block(reason ?? `${name} blocked this`);
    else if (json.decision === "approve" && event === "PreToolUse") decide("allow", reason);
    const specific = json.hookSpecificOutput;
    const decision = specific?.permissionDecision;
    if (event === "PreToolUse" && (decision === "allow" || decision === "deny" || decision === "ask")) {
      const why =
        typeof specific?.permissionDecisionReason === "string" ? specific.permissionDecisionReason : reason;
      if (decision === "deny") block(why ?? `${name} denied this tool call`);
      else decide(decision, why);
    }
    const replacement = specific?.updatedInput ?? json.updatedInput;
    if (event === "PreToolUse" && isRecord(replacement)) updatedInput = replacement;
    if (typeof specific?.additionalContext === "string")
      additionalContext.push(forModel(specific.additionalContext, "additionalContext"));
    const answer = event === "PermissionRequest" ? permissionRequestAnswer(specific?.decision) : undefined;
    if (answer !== undefined && permissionRequestDecision?.behavior !== "deny")
      permissionRequestDecision = answer;
  }

  return {
    event,
    results,
    blocked,
    blockReasons,
    ...(permissionDecision === undefined ? {} : { permissionDecision }),
    ...(permissionDecisionReason === undefined ? {} : { permissionDecisionReason }),
    ...(blockingError === undefined ? {} : { blockingError }),
    ...(updatedInput === undefined ? {} : { updatedInput }),
    ...(permissionRequestDecision === undefined ? {} : { permissionRequestDecision }),
    continue: keepGoing,
    ...(stopReason === undefined ? {} : { stopReason }),
    additionalContext,
    systemMessages,
    errors,
  };
}

/** `{behavior: "allow", updatedInput?}` or `{behavior: "deny", message?, interrupt?}`; anything else is no answer. */
function permissionRequestAnswer(decision: unknown): PermissionRequestHookDecision | undefined {
  if (!isRecord(decision)) return undefined;
  if (decision.behavior === "allow") {
    return isRecord(decision.updatedInput)
      ? { behavior: "allow", updatedInput: decision.updatedInput }
      : { behavior: "allow" };
  }
  if (decision.behavior !== "deny") return undefined;
  return {
    behavior: "deny",
    ...(typeof decision.message === "string" ? { message: decision.message } : {}),
    ...(decision.interrupt === true ? { interrupt: true } : {}),
  };
}

function parseJsonObject(text: string): HookJsonOutput | undefined {
  if (!text.startsWith("{")) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? (value as HookJsonOutput) : undefined;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
