import type {
  AppliedEdit,
  ClearThinkingEdit,
  ClearToolUsesEdit,
  ContextManagement,
} from "./context-edits-schema.js";
import { blocksOf } from "./conversation-turns.js";
import type { ContentBlockParam, CountTokensRequest, MessageParam } from "./request-schema.js";

/**
 * What replaces a cleared tool result's content. The API's exact placeholder wording is
 * UNCONFIRMED (api doc §9 says only "puts placeholder text in their place").
 */
export const CLEARED_TOOL_RESULT_TEXT = "[tool result cleared by context management]";

/** Defaults of `clear_tool_uses_20250919` (api doc §9; partly UNCONFIRMED there). */
const DEFAULT_CLEAR_TRIGGER_INPUT_TOKENS = 100_000;
const DEFAULT_KEEP_TOOL_USES = 3;
/** `clear_thinking_20251015` keeps the thinking of the last turn by default (api doc §9). */
const DEFAULT_KEEP_THINKING_TURNS = 1;

export interface EditedPrompt<B> {
  /** The body the model sees: what is counted, cached and given to the brain. */
  body: B;
  appliedEdits: AppliedEdit[];
}

/**
 * Applies `context_management.edits` in order, server-side, before anything is counted or
 * cached (api doc §9). `measure` is the prompt's input-token count under the request's model, so
 * `cleared_input_tokens` is the drop the edit caused in that count. An edit whose trigger is not
 * reached, or that would clear nothing (or less than `clear_at_least`), is not applied and not
 * reported.
 */
export function applyContextEdits<B extends CountTokensRequest>(
  body: B,
  config: ContextManagement,
  measure: (body: B) => number,
): EditedPrompt<B> {
  let current = body;
  const appliedEdits: AppliedEdit[] = [];
  for (const edit of config.edits ?? []) {
    const before = measure(current);
    const result =
      edit.type === "clear_tool_uses_20250919"
        ? clearToolUses(current, edit, before)
        : clearThinking(current, edit);
    if (!result) continue;
    const cleared = before - measure(result.body);
    if (edit.type === "clear_tool_uses_20250919" && cleared < (edit.clear_at_least?.value ?? 0)) continue;
    current = result.body;
    appliedEdits.push(
      edit.type === "clear_tool_uses_20250919"
        ? { type: edit.type, cleared_tool_uses: result.count, cleared_input_tokens: cleared }
        : { type: edit.type, cleared_thinking_turns: result.count, cleared_input_tokens: cleared },
    );
  }
  return { body: current, appliedEdits };
}

interface ToolUseAt {
  id: string;
  name: string;
}

/** Clears the oldest tool uses beyond `keep` (excluded tools are never cleared nor counted). */
function clearToolUses<B extends CountTokensRequest>(
  body: B,
  edit: ClearToolUsesEdit,
  inputTokens: number,
): { body: B; count: number } | null {
  const uses = toolUses(body.messages);
  const trigger = edit.trigger ?? { type: "input_tokens", value: DEFAULT_CLEAR_TRIGGER_INPUT_TOKENS };
  const reached = trigger.type === "tool_uses" ? uses.length > trigger.value : inputTokens > trigger.value;
  if (!reached) return null;
  const excluded = new Set(edit.exclude_tools ?? []);
  const clearable = uses.filter((use) => !excluded.has(use.name));
  const keep = edit.keep?.value ?? DEFAULT_KEEP_TOOL_USES;
  const cleared = clearable.slice(0, Math.max(0, clearable.length - keep));
  if (cleared.length === 0) return null;
  const ids = new Set(cleared.map((use) => use.id));
  const inputs = edit.clear_tool_inputs ?? false;
  const clearsInput = (name: string): boolean => (Array.isArray(inputs) ? inputs.includes(name) : inputs);
  const messages = body.messages.map((message) =>
    mapBlocks(message, (block) => {
      if (block.type === "tool_result" && ids.has(block.tool_use_id)) {
        return { ...block, content: CLEARED_TOOL_RESULT_TEXT };
      }
      if (block.type === "tool_use" && ids.has(block.id) && clearsInput(block.name)) {
        return { ...block, input: {} };
      }
      return block;
    }),
  );
  return { body: { ...body, messages }, count: cleared.length };
}

/** Removes thinking from every assistant turn but the last `keep` turns that have thinking. */
function clearThinking<B extends CountTokensRequest>(
  body: B,
  edit: ClearThinkingEdit,
): { body: B; count: number } | null {
  const keep = edit.keep;
  if (keep === "all" || keep?.type === "all") return null;
  const keepTurns = keep?.value ?? DEFAULT_KEEP_THINKING_TURNS;
  const thinkingTurns = body.messages.flatMap((message, i) =>
    message.role === "assistant" && blocksOf(message).some(isThinking) ? [i] : [],
  );
  const cleared = new Set(thinkingTurns.slice(0, Math.max(0, thinkingTurns.length - keepTurns)));
  if (cleared.size === 0) return null;
  const messages = body.messages.map((message, i) =>
    cleared.has(i) ? { ...message, content: blocksOf(message).filter((b) => !isThinking(b)) } : message,
  );
  return { body: { ...body, messages }, count: cleared.size };
}

function toolUses(messages: readonly MessageParam[]): ToolUseAt[] {
  return messages.flatMap((message) =>
    message.role === "assistant"
      ? blocksOf(message).flatMap((b) => (b.type === "tool_use" ? [{ id: b.id, name: b.name }] : []))
      : [],
  );
}

function mapBlocks(
  message: MessageParam,
  map: (block: ContentBlockParam) => ContentBlockParam,
): MessageParam {
  if (typeof message.content === "string") return message;
  return { ...message, content: message.content.map(map) };
}

function isThinking(block: ContentBlockParam): boolean {
  return block.type === "thinking" || block.type === "redacted_thinking";
}
