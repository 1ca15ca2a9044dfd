import { type ApiError, invalidRequest } from "./api-error.js";
import { turnsOf } from "./conversation-turns.js";
import type { CountTokensRequest } from "./request-schema.js";

export function checkTools(body: CountTokensRequest): ApiError | null {
  const names = new Set<string>();
  for (const tool of body.tools ?? []) {
    // An mcp_toolset has no name of its own (its server's name is checked in validate-tool-sets).
    if (typeof (tool as { name?: unknown }).name !== "string") continue;
    if (names.has(tool.name)) return invalidRequest("tools: Tool names must be unique.");
    names.add(tool.name);
  }
  const choice = body.tool_choice;
  // A forced choice with nothing to call cannot be honoured. Both wordings are the API's, as a
  // live probe recorded them (2026-09-29, requests without tools and with an undeclared name):
  // https://github.com/aakshintala/fiber/blob/b06675c402a3286e528740b4b807d846ecf3cd86/research/anthropic-messages-probe/README.md
  if (choice?.type === "any" && names.size === 0) {
    return invalidRequest("tool_choice.any may only be specified while providing tools");
  }
  if (choice?.type === "tool" && !names.has(choice.name)) {
    return invalidRequest(`Tool '${choice.name}' not found in provided tools`);
  }
  return null;
}

/**
 * Every tool_use must be answered by a tool_result at the START of the next user turn, and every
 * tool_result must answer a tool_use of the previous assistant turn (the API's wording).
 */
export function checkToolPairing(body: CountTokensRequest): ApiError | null {
  const turns = turnsOf(body);
  const toolBlocks = turns.some((t) =>
    t.blocks.some(({ block }) => block.type === "tool_use" || block.type === "tool_result"),
  );
  if (toolBlocks && (body.tools ?? []).length === 0) {
    return invalidRequest("Requests which include `tool_use` or `tool_result` blocks must define tools.");
  }
  const seen = new Set<string>();
  for (const turn of turns) {
    for (const { m, b, block } of turn.blocks) {
      if (block.type !== "tool_use") continue;
      if (seen.has(block.id))
        return invalidRequest(`messages.${m}.content.${b}: \`tool_use\` ids must be unique`);
      seen.add(block.id);
    }
  }
  for (const [t, turn] of turns.entries()) {
    if (turn.role !== "user") continue;
    const previous = turns[t - 1];
    const offered = new Set<string>();
    if (previous) {
      for (const { block } of previous.blocks) if (block.type === "tool_use") offered.add(block.id);
    }
    for (const { m, b, block } of turn.blocks) {
      if (block.type === "tool_result" && !offered.has(block.tool_use_id)) {
        return invalidRequest(
          `messages.${m}.content.${b}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`,
        );
      }
    }
  }
  for (const [t, turn] of turns.entries()) {
    if (turn.role !== "assistant") continue;
    const next = turns[t + 1];
    // A trailing assistant turn is a prefill; its tool_use cannot be answered yet.
    if (!next) continue;
    const answered = new Set<string>();
    for (const { block } of next.blocks) {
      if (block.type !== "tool_result") break;
      answered.add(block.tool_use_id);
    }
    const missing = turn.blocks.flatMap(({ block }) =>
      block.type === "tool_use" && !answered.has(block.id) ? [block.id] : [],
    );
    if (missing.length > 0) {
      const at = turn.blocks.at(-1)?.m ?? turn.firstMessage;
      return invalidRequest(
        `messages.${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`,
      );
    }
  }
  return null;
}
