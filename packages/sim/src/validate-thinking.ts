import { type ApiError, invalidRequest } from "./api-error.js";
import { turnsOf } from "./conversation-turns.js";
import type { IssuedThinking } from "./issued-thinking.js";
import type { ModelSpec } from "./model-registry.js";
import type { CountTokensRequest, MessagesRequest } from "./request-schema.js";
import { isValidThinkingSignature } from "./thinking-signature.js";
import type { RequestContext } from "./validate-request.js";

export function checkThinkingConfig(
  body: MessagesRequest,
  model: ModelSpec,
  ctx: RequestContext,
): ApiError | null {
  const thinking = body.thinking;
  if (!thinking) return null;
  if (thinking.type === "enabled") {
    if (!model.thinking.enabled) {
      return invalidRequest(
        '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
      );
    }
    if (thinking.budget_tokens < 1024) {
      return invalidRequest("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024");
    }
    // With interleaved thinking the context window is the limit instead (api doc §8).
    const interleaved = ctx.betas.includes("interleaved-thinking-2025-05-14");
    if (!interleaved && thinking.budget_tokens >= body.max_tokens) {
      return invalidRequest(
        "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size",
      );
    }
  }
  if (thinking.type === "adaptive" && !model.thinking.adaptive) {
    return invalidRequest("adaptive thinking is not supported on this model");
  }
  if (thinking.type === "disabled" && !model.thinking.disabled) {
    return invalidRequest('"thinking.type.disabled" is not supported for this model.');
  }
  // Manual extended thinking refuses a forced tool; adaptive thinking accepts one (and skips
  // thinking for that reply) except on the models that refuse it (api doc §8, thinking docs).
  const forced = body.tool_choice?.type === "any" || body.tool_choice?.type === "tool";
  const refused =
    thinking.type === "enabled" || (thinking.type === "adaptive" && model.refusesForcedToolWithThinking);
  if (forced && refused) {
    return invalidRequest("Thinking may not be enabled when tool_choice forces tool use.");
  }
  return null;
}

/** Whether the request has thinking on, so replies may carry thinking blocks. */
export function thinkingOn(body: CountTokensRequest): boolean {
  const type = body.thinking?.type;
  return type === "enabled" || type === "adaptive";
}

/**
 * With thinking enabled, the assistant turn that the trailing tool results answer must start with
 * its thinking block: a client that drops thinking blocks mid tool loop gets this 400 (api doc §8).
 */
export function checkThinkingFirst(body: MessagesRequest): ApiError | null {
  if (body.thinking?.type !== "enabled") return null;
  const turns = turnsOf(body);
  const last = turns.at(-1);
  const assistant = turns.at(-2);
  if (last?.role !== "user" || assistant?.role !== "assistant") return null;
  if (last.blocks[0]?.block.type !== "tool_result") return null;
  const first = assistant.blocks[0];
  if (!first || first.block.type === "thinking" || first.block.type === "redacted_thinking") return null;
  return invalidRequest(
    `messages.${first.m}.content.${first.b}.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.block.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). We recommend you include thinking blocks from previous turns. To avoid this requirement, disable \`thinking\`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking`,
  );
}

/** The latest assistant turn must carry the thinking issued with its tool_use, unmodified and in order. */
export function checkIssuedThinking(
  body: MessagesRequest,
  issued: IssuedThinking | undefined,
): ApiError | null {
  if (!issued || !thinkingOn(body)) return null;
  const turn = turnsOf(body).findLast((t) => t.role === "assistant");
  if (!turn) return null;
  const toolUse = turn.blocks.find(({ block }) => block.type === "tool_use" && issued.lookup(block.id));
  if (toolUse?.block.type !== "tool_use") return null;
  const expected = issued.lookup(toolUse.block.id) ?? [];
  const actual = turn.blocks.flatMap(({ block }) => (block.type === "thinking" ? [block.signature] : []));
  if (actual.length === expected.length && actual.every((s, i) => s === expected[i])) return null;
  if (actual.length === 0 && thinkingMayBeOmitted(body)) return null;
  const first = turn.blocks[0];
  return latestThinkingModified(first?.m ?? turn.firstMessage, first?.b ?? 0);
}

/**
 * Under adaptive thinking the model decides whether to think, so a turn without thinking is
 * valid; and once the next user turn says more than its tool results, that assistant turn is a
 * prior turn, whose thinking the API strips anyway (thinking docs). So its thinking may be left
 * out altogether: Claude Code's fork sub-agent resends the parent's last turn that way, after
 * placeholder tool results and its directive (R-D2). A thinking block that does come back
 * must still be unmodified and in order. Which exact cases the API accepts is UNCONFIRMED.
 */
function thinkingMayBeOmitted(body: MessagesRequest): boolean {
  if (body.thinking?.type !== "adaptive") return false;
  const last = turnsOf(body).at(-1);
  return last?.role === "user" && last.blocks.some(({ block }) => block.type !== "tool_result");
}

/** Thinking blocks must come back exactly as the simulator signed them (api doc §8). */
export function checkThinkingBlocks(body: CountTokensRequest): ApiError | null {
  let latestAssistant = -1;
  body.messages.forEach((message, m) => {
    if (message.role === "assistant") latestAssistant = m;
  });
  for (const [m, message] of body.messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [b, block] of message.content.entries()) {
      if (block.type !== "thinking" || isValidThinkingSignature(block.thinking, block.signature)) continue;
      if (m === latestAssistant) return latestThinkingModified(m, b);
      return invalidRequest(`messages.${m}.content.${b}: Invalid \`signature\` in \`thinking\` block`);
    }
  }
  return null;
}

/** The API's 400 for thinking of the latest assistant turn that did not come back as issued. */
function latestThinkingModified(m: number, b: number): ApiError {
  return invalidRequest(
    `messages.${m}.content.${b}: \`thinking\` or \`redacted_thinking\` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response.`,
  );
}
