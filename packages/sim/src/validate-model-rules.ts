import { type ApiError, invalidRequest } from "./api-error.js";
import type { ModelSpec } from "./model-registry.js";
import type { CountTokensRequest, MessagesRequest } from "./request-schema.js";

/**
 * The per-model request rules of the model table (R-D2). Pages:
 * - effort: https://platform.claude.com/docs/en/build-with-claude/effort (which models take
 *   effort and which levels; "requests using max on other models return an error")
 * - per-message effort: https://platform.claude.com/docs/en/build-with-claude/effort-per-message
 *   (an effort-only `role: "system"` message, beta `mid-conversation-output-config-2026-07-01`)
 *   Claude Code 2.1.333 sends the same per-turn effort under the beta name
 *   `per-turn-control-2026-07-01`, on a system message that may carry content too (SDK 1.14's
 *   BetaSystemMessageParam: "An empty `{}` is accepted on a message that carries content; a
 *   message with neither content nor output_config fields is rejected"); no page names that beta,
 *   so accepting it as the same feature is UNCONFIRMED
 * - `clear_at` on a system message (BetaSystemMessageParam), beta
 *   `mid-conversation-system-clear-at-2026-08-21` (the SDK's beta list; which beta gates it is
 *   UNCONFIRMED)
 * - mid-conversation system messages:
 *   https://platform.claude.com/docs/en/build-with-claude/mid-conversation-system-messages
 *   (Opus 4.8 and later; right after a user turn or an assistant turn that ends in server tool
 *   use; before an assistant turn or at the end; never two in a row)
 * - thinking display "updates": beta `thinking-display-updates-2026-08-18`, on the models that
 *   offer it (adaptive thinking page)
 * - extended thinking: thinking is incompatible with `top_k` and with `top_p` below 0.95
 *   (https://platform.claude.com/docs/en/build-with-claude/extended-thinking#feature-compatibility)
 * The pages give the rules, not the 400s' wording: every message here is UNCONFIRMED wording in
 * the API's style (`<path>: <reason>`), except the system-message placement sentences
 * (SYSTEM_PLACEMENT_SOURCE below).
 */
/*
 * SYSTEM_PLACEMENT_SOURCE: the API's placement sentences, as a direct-API parity suite recorded
 * them (measured 2026-08-31 on claude-sonnet-5):
 * https://github.com/kangminlee-maker/local-OAuth-CLI-API-adapter/blob/87ac1c5ed83001bee363ff8b17051fa4beaf3cc3/test/anthropic-messages-validation-parity.test.mjs
 * (the "precede" sentence, without the suffix, also in anthropics/claude-code#73821). That suite
 * saw runs of system messages accepted where only the run's end is placed; the simulator keeps
 * the page's "never two in a row".
 */
const SYSTEM_FIRST = "use the top-level 'system' parameter for the initial system prompt";
const SYSTEM_PRECEDES = "role 'system' must precede an 'assistant' message or end the array";
const DIRECTIVE_ANYWHERE =
  "; the directive-only form (content: [] with output_config) is accepted at any position";

const PER_MESSAGE_EFFORT_BETA = "mid-conversation-output-config-2026-07-01";
/** Claude Code's name for the same per-turn effort (its `per_message_effort` beta). */
const PER_TURN_CONTROL_BETA = "per-turn-control-2026-07-01";
const SYSTEM_CLEAR_AT_BETA = "mid-conversation-system-clear-at-2026-08-21";
const DISPLAY_UPDATES_BETA = "thinking-display-updates-2026-08-18";

export function checkModelRules(
  body: MessagesRequest,
  model: ModelSpec,
  betas: readonly string[],
): ApiError | null {
  return (
    checkEffort(body.output_config?.effort ?? undefined, "output_config.effort", body, model) ??
    checkDisplay(body, model, betas) ??
    checkThinkingSampling(body)
  );
}

/** System messages: who may send them, where, and their per-message effort. */
export function checkSystemMessages(
  body: CountTokensRequest,
  model: ModelSpec,
  betas: readonly string[],
): ApiError | null {
  const messages = body.messages;
  for (const [m, message] of messages.entries()) {
    if (message.clear_at != null && (message.role !== "system" || !betas.includes(SYSTEM_CLEAR_AT_BETA)))
      return invalidRequest(`messages.${m}.clear_at: Extra inputs are not permitted`);
    if (message.output_config !== undefined) {
      const perTurn = betas.includes(PER_MESSAGE_EFFORT_BETA) || betas.includes(PER_TURN_CONTROL_BETA);
      if (message.role !== "system" || !perTurn)
        return invalidRequest(`messages.${m}.output_config: Extra inputs are not permitted`);
      if (message.content.length === 0 && message.output_config.effort == null)
        return invalidRequest(`messages.${m}: a system message must have content or an output_config field`);
      const error = checkEffort(
        message.output_config.effort ?? undefined,
        `messages.${m}.output_config.effort`,
        body,
        model,
      );
      if (error) return error;
    }
    if (message.role !== "system" || isEffortOnly(message)) continue;
    const before = messages[m - 1];
    const after = messages[m + 1];
    // The first and third sentences are the API's, observed directly (SYSTEM_PLACEMENT_SOURCE);
    // the second (after an assistant turn) is UNCONFIRMED.
    if (before === undefined) return invalidRequest(`messages.${m}: ${SYSTEM_FIRST}${DIRECTIVE_ANYWHERE}`);
    if (!(before.role === "user" || endsInServerToolUse(before))) {
      return invalidRequest(
        `messages.${m}: a system message must immediately follow a user turn or an assistant turn that ends in server tool use`,
      );
    }
    if (after !== undefined && after.role !== "assistant" && !isEffortOnly(after)) {
      return invalidRequest(`messages.${m}: ${SYSTEM_PRECEDES}${DIRECTIVE_ANYWHERE}`);
    }
  }
  return null;
}

/**
 * An effort-only system message: empty content with `output_config` (no placement rules). One
 * with content too is a mid-conversation system message and follows their placement rules.
 */
function isEffortOnly(message: CountTokensRequest["messages"][number]): boolean {
  return message.role === "system" && message.content.length === 0 && message.output_config !== undefined;
}

function endsInServerToolUse(message: CountTokensRequest["messages"][number]): boolean {
  if (message.role !== "assistant" || typeof message.content === "string") return false;
  return message.content.at(-1)?.type === "server_tool_use";
}

function checkEffort(
  level: string | undefined,
  path: string,
  body: CountTokensRequest,
  model: ModelSpec,
): ApiError | null {
  if (level === undefined) return null;
  const accepted = model.effort;
  if (accepted !== undefined && accepted.length === 0) {
    // The API's sentence for top-level effort on a model without it (griffinmartin/opencode-claude-auth#125
    // quotes it for Haiku 4.5; anthropics/claude-code#30760 too); per-message effort's is UNCONFIRMED.
    if (path === "output_config.effort")
      return invalidRequest("This model does not support the effort parameter.");
    return invalidRequest(`${path}: effort is not supported on this model`);
  }
  if (accepted !== undefined && !(accepted as readonly string[]).includes(level)) {
    return invalidRequest(
      `${path}: "${level}" is not supported on this model; supported values: ${accepted.join(", ")}`,
    );
  }
  if (
    body.thinking?.type === "disabled" &&
    (model.effortNeedsThinking as readonly string[] | undefined)?.includes(level)
  ) {
    // The API's sentence for Opus 5 (anthropics/claude-code#81084 quotes the body); for a
    // per-message effort the same sentence is assumed at that path (UNCONFIRMED).
    return invalidRequest(
      `${path} '${level}' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking.`,
    );
  }
  return null;
}

function checkDisplay(body: MessagesRequest, model: ModelSpec, betas: readonly string[]): ApiError | null {
  const thinking = body.thinking;
  if (!thinking || !("display" in thinking) || thinking.display !== "updates") return null;
  const path = `thinking.${thinking.type}.display`;
  if (!betas.includes(DISPLAY_UPDATES_BETA))
    return invalidRequest(`${path}: Input should be 'summarized' or 'omitted'`);
  if (!model.displayUpdates) return invalidRequest(`${path}: "updates" is not supported on this model`);
  return null;
}

/** Thinking is incompatible with top_k and with top_p below 0.95 (extended thinking page). */
function checkThinkingSampling(body: MessagesRequest): ApiError | null {
  const on = body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";
  if (!on) return null;
  if (body.top_k !== undefined) return invalidRequest("top_k: is not supported when thinking is enabled");
  if (body.top_p !== undefined && body.top_p < 0.95) {
    return invalidRequest("top_p: must be between 0.95 and 1 when thinking is enabled");
  }
  return null;
}
