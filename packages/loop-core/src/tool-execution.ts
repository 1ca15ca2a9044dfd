import { z } from "zod";
import { createUserMessage } from "./create-message.js";
import type { LoopHooks, PreToolUseOutcome } from "./hooks.js";
import { interruptedResult } from "./interrupted-result.js";
import type { ContentBlockParam, ToolResultMeta, ToolUseBlock, UserMessage } from "./messages.js";
import type { CanUseTool, PermissionDecision } from "./permissions.js";
import { type Tool, type ToolResult, type ToolUseContext, toolUseResultOf } from "./tool.js";
import { toolUseRejection } from "./untrusted-tool-uses.js";

export interface ToolRunOptions {
  readonly context: ToolUseContext;
  readonly canUseTool: CanUseTool;
  readonly hooks: LoopHooks | undefined;
  readonly uuid: () => string;
}

/** The outcome of one tool_use: the tool_result message, and whether a hook stopped the loop. */
export interface ToolRunOutcome {
  readonly message: UserMessage;
  /** Set when a PreToolUse / PostToolUse hook returned `continue: false` (R-L6 `hook_stopped`). */
  readonly stop?: { readonly reason: string };
}

export function findTool(tools: readonly Tool[], name: string): Tool | undefined {
  return tools.find((tool) => tool.name === name || tool.aliases?.includes(name));
}

/** R-T2: a call is concurrency-safe only if its input parses and the tool says so. */
export function isConcurrencySafeCall(tools: readonly Tool[], block: ToolUseBlock): boolean {
  if (toolUseRejection(block) !== undefined) return true; // answered at once, runs nothing
  const tool = findTool(tools, block.name);
  if (!tool) return true; // answered at once with an error result, touches nothing
  const parsed = tool.inputSchema.safeParse(block.input);
  if (!parsed.success) return true;
  try {
    return tool.isConcurrencySafe(parsed.data);
  } catch {
    return false;
  }
}

/**
 * R-T1, one tool_use: lookup → zod validation → backfill → PreToolUse hooks → permission →
 * call with the abort signal → PostToolUse hooks → size cap → tool_result. Every expected
 * failure (unknown tool, bad input, denial, a throwing tool) becomes an `is_error` tool_result;
 * this function never throws, because an unanswered tool_use poisons every later request (R-L12).
 */
export async function runToolUse(
  block: ToolUseBlock,
  /** uuid of the assistant message holding the tool_use (the result's parent). */
  parentUuid: string | null,
  options: ToolRunOptions,
): Promise<ToolRunOutcome> {
  const { context } = options;
  // Set once the call reaches its permission check (R-K2): what decided it travels with the result.
  let meta: ToolResultMeta | undefined;
  const reply = (result: ToolResult, stop?: { reason: string }): ToolRunOutcome => ({
    message: toolResultMessage(block.id, result, parentUuid, options.uuid(), meta),
    ...(stop ? { stop } : {}),
  });
  // R-R3: the model client refused this call (duplicate id, input nested too deep).
  const rejection = toolUseRejection(block);
  if (rejection !== undefined) return reply(errorResult(rejection));
  const tool = findTool(context.tools, block.name);
  if (!tool) return reply(errorResult(noSuchTool(block.name, context)));

  const parsed = tool.inputSchema.safeParse(block.input);
  if (!parsed.success) {
    return reply(errorResult(`InputValidationError: ${z.prettifyError(parsed.error)}`));
  }
  let input = tool.backfillInput ? tool.backfillInput(parsed.data, context) : parsed.data;
  const given = input;

  const pre = await runPreToolUseHooks(block, input, options);
  if (pre.updatedInput) {
    const reparsed = tool.inputSchema.safeParse(pre.updatedInput);
    if (!reparsed.success) {
      return reply(
        errorResult(`InputValidationError (from PreToolUse hook): ${z.prettifyError(reparsed.error)}`),
      );
    }
    input = reparsed.data;
  }
  if (pre.continue === false) {
    const reason = pre.stopReason ?? pre.reason ?? "Stopped by a PreToolUse hook";
    return reply(errorResult(`Execution stopped by PreToolUse hook: ${reason}`), { reason });
  }
  if (pre.decision === "deny") {
    meta = { permission: { decision: "reject", ...BY_HOOK }, notRun: "permission-rule" };
    // Claude Code's words, untagged (R-X1).
    const blockingError = pre.blockingError ?? pre.reason ?? "Blocked by hook";
    return reply({ content: `PreToolUse:${block.name} hook error: ${blockingError}`, isError: true });
  }
  // A hook's allow is an answer to "may it run?", not a way past deny rules or plan mode (R-P1).
  const decision = await safePermission(options, tool.name, input, block.id, pre.decision === "allow");
  // Only a hook's updatedInput can have changed it (the same object otherwise: nothing to compare).
  const hookChanged = input !== given && JSON.stringify(given) !== JSON.stringify(input);
  meta = permissionMeta(decision, pre.decision === "allow", hookChanged);
  if (decision.behavior === "deny") {
    // "No, and stop": the caller wants the whole run interrupted (R-L16 path via the signal).
    if (decision.interrupt) context.abortController.abort("permission_denied");
    // The asker's words as they are, untagged, as Claude Code gives a denial to the model (R-X1).
    return reply({ content: decision.message, isError: true });
  }
  let userModified = false;
  if (decision.updatedInput) {
    const reparsed = tool.inputSchema.safeParse(decision.updatedInput);
    if (!reparsed.success)
      return reply(errorResult(`InputValidationError: ${z.prettifyError(reparsed.error)}`));
    userModified = JSON.stringify(reparsed.data) !== JSON.stringify(input);
    input = reparsed.data;
  }

  let result: ToolResult;
  const startedAt = Date.now();
  try {
    // Object.assign, not a spread: a spread that adds a key its source lacks (toolUseId) took
    // about 1.5 µs a call on Node 20's V8 against 0.3 (the loop bench; same keys, same order).
    result = await tool.call(
      input,
      Object.assign({}, context, { toolUseId: block.id }, userModified ? { userModified } : undefined),
    );
  } catch (error) {
    const interrupted = context.abortController.signal.aborted;
    // Cut by the user's interrupt: reported as the executor reports a call the stop cancelled.
    if (interrupted) meta = INTERRUPTED_META;
    result = interrupted ? interruptedResult(true) : errorResult(`Error: ${errorMessage(error)}`);
  }

  let stop: { reason: string } | undefined;
  for (const hook of options.hooks?.postToolUse ?? []) {
    const outcome = await safeHook(() =>
      hook({
        toolName: tool.name,
        toolInput: input,
        toolUseId: block.id,
        context,
        result,
        durationMs: Date.now() - startedAt,
      }),
    );
    if (outcome?.updatedResult) result = outcome.updatedResult;
    if (outcome?.additionalContext) result = appendText(result, outcome.additionalContext);
    if (outcome?.continue === false) stop = { reason: outcome.stopReason ?? "Stopped by a PostToolUse hook" };
  }
  return reply(capResult(result, tool.maxResultSizeChars), stop);
}

async function runPreToolUseHooks(
  block: ToolUseBlock,
  input: Record<string, unknown>,
  options: ToolRunOptions,
): Promise<PreToolUseOutcome> {
  let merged: PreToolUseOutcome = {};
  let currentInput = input;
  for (const hook of options.hooks?.preToolUse ?? []) {
    const outcome = await safeHook(() =>
      hook({ toolName: block.name, toolInput: currentInput, toolUseId: block.id, context: options.context }),
    );
    if (!outcome) continue;
    if (outcome.updatedInput) currentInput = outcome.updatedInput;
    // The strictest decision wins: deny > ask > allow.
    const decision =
      merged.decision === "deny" || outcome.decision === "deny"
        ? "deny"
        : merged.decision === "ask" || outcome.decision === "ask"
          ? "ask"
          : (outcome.decision ?? merged.decision);
    merged = {
      ...merged,
      ...outcome,
      ...(decision ? { decision } : {}),
      ...(currentInput !== input ? { updatedInput: currentInput } : {}),
      ...(merged.continue === false ? { continue: false } : {}),
    };
    if (outcome.continue === false || decision === "deny") break;
  }
  return merged;
}

/** Hooks must not throw (hooks.ts); if one does, it counts as "no opinion". */
async function safeHook<T>(run: () => Promise<T>): Promise<T | undefined> {
  try {
    return await run();
  } catch {
    return undefined;
  }
}

async function safePermission(
  options: ToolRunOptions,
  toolName: string,
  input: Record<string, unknown>,
  toolUseId: string,
  approvedByHook: boolean,
): Promise<PermissionDecision> {
  try {
    return await options.canUseTool(toolName, input, {
      signal: options.context.abortController.signal,
      toolUseId,
      agentId: options.context.agentId,
      ...(approvedByHook ? { approvedByHook } : {}),
    });
  } catch (error) {
    return { behavior: "deny" as const, message: `Permission check failed: ${errorMessage(error)}` };
  }
}

/**
 * The answer to a call of a tool the session does not offer, in Claude Code's words: one a bare
 * deny rule removed is named as disabled everywhere, sub-agents included (R-P1, R-X1).
 */
function noSuchTool(name: string, context: ToolUseContext): string {
  if (!context.disabledTools?.includes(name)) return `No such tool available: ${name}`;
  return `Error: No such tool available: ${name}. ${name} is disabled for this session, in subagents as well as here.`;
}

export function errorResult(message: string): ToolResult {
  return { content: `<tool_use_error>${message}</tool_use_error>`, isError: true };
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function appendText(result: ToolResult, text: string): ToolResult {
  const content: readonly ContentBlockParam[] =
    typeof result.content === "string"
      ? [
          { type: "text", text: result.content },
          { type: "text", text },
        ]
      : [...result.content, { type: "text", text }];
  return { ...result, content };
}

/** R-C0 at the source: a result longer than the tool's cap is cut, with a note saying so. */
function capResult(result: ToolResult, maxChars: number): ToolResult {
  if (!Number.isFinite(maxChars) || typeof result.content !== "string" || result.content.length <= maxChars) {
    return result;
  }
  const omitted = result.content.length - maxChars;
  return { ...result, content: `${result.content.slice(0, maxChars)}\n… [${omitted} characters truncated]` };
}

/** What a hook's decision reports as its source (Claude Code's `source: hook`, `reason_type: hook`). */
const BY_HOOK = { source: "hook", reasonType: "hook" } as const;

/** A call the user's interrupt cut before it finished: no permission outcome, rejected by the user. */
export const INTERRUPTED_META: ToolResultMeta = { notRun: "user-rejected" };

/**
 * R-K2: a checked call's `tool_result_meta`. A hook's allow that the checker did not overrule is
 * the hook's decision; a decision without provenance (a plain CanUseTool) is the configuration's.
 * A refusal says why the call did not run. An input a PreToolUse hook changed is marked (Claude
 * Code marks a hook's change, not a permission answer's: measured with --permission-prompt-tool).
 */
function permissionMeta(
  decision: PermissionDecision,
  approvedByHook: boolean,
  hookChanged: boolean,
): ToolResultMeta {
  const allowed = decision.behavior === "allow";
  const by = allowed && approvedByHook ? BY_HOOK : (decision.decidedBy ?? { source: "config" as const });
  const permission = {
    decision: allowed ? ("accept" as const) : ("reject" as const),
    source: by.source,
    ...(by.reasonType === undefined ? {} : { reasonType: by.reasonType }),
  };
  if (!allowed) {
    const unanswered = decision.decidedBy?.unanswered === true;
    return { permission, notRun: unanswered ? "user-rejected" : "permission-rule" };
  }
  return hookChanged ? { permission, inputChanged: true } : { permission };
}

export function toolResultMessage(
  toolUseId: string,
  result: ToolResult,
  parentUuid: string | null,
  uuid: string,
  toolResultMeta?: ToolResultMeta,
): UserMessage {
  const content =
    typeof result.content === "string" ? result.content : (result.content as ContentBlockParam[]);
  return createUserMessage(
    [
      {
        type: "tool_result",
        tool_use_id: toolUseId,
        content: content as string,
        // A tool that says it did not fail says so to the model, as Claude Code's Bash does (R-X1).
        ...(result.isError === undefined ? {} : { is_error: result.isError }),
      },
    ],
    {
      uuid,
      parentUuid,
      toolUseResult: toolUseResultOf(result),
      ...(toolResultMeta === undefined ? {} : { toolResultMeta }),
    },
  );
}
