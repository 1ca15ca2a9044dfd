/**
 * The API's tool_use / tool_result rules, checked on a request's `messages` (R-R3: the
 * chaos suite checks every request the simulator recorded and asserts there is none):
 * tool_use ids are unique in the conversation; every tool_use of an assistant turn is answered by
 * a tool_result in the next user turn; every tool_result answers a tool_use of the turn before,
 * at most once. Consecutive messages of one role are one turn, as the API reads them.
 */
export function toolPairingViolations(messages: readonly unknown[] | undefined): string[] {
  const violations: string[] = [];
  const seen = new Set<string>();
  let offered: string[] = [];
  for (const { index, role, blocks } of turnsOf(messages ?? [])) {
    if (role === "assistant") {
      if (offered.length > 0) violations.push(`messages.${index}: tool_use ${offered.join(", ")} unanswered`);
      offered = [];
      for (const block of blocks) {
        if (block.type !== "tool_use") continue;
        const id = String(block.id);
        if (seen.has(id)) violations.push(`messages.${index}: duplicate tool_use id ${id}`);
        seen.add(id);
        offered.push(id);
      }
      continue;
    }
    const answered = new Set<string>();
    for (const block of blocks) {
      if (block.type !== "tool_result") continue;
      const id = String(block.tool_use_id);
      if (answered.has(id)) violations.push(`messages.${index}: two tool_results for ${id}`);
      else if (!offered.includes(id)) violations.push(`messages.${index}: tool_result ${id} answers nothing`);
      answered.add(id);
    }
    const missing = offered.filter((id) => !answered.has(id));
    if (missing.length > 0) violations.push(`messages.${index}: tool_use ${missing.join(", ")} unanswered`);
    offered = [];
  }
  return violations;
}

type LooseBlock = { type?: unknown; id?: unknown; tool_use_id?: unknown };

function turnsOf(messages: readonly unknown[]): { index: number; role: unknown; blocks: LooseBlock[] }[] {
  const turns: { index: number; role: unknown; blocks: LooseBlock[] }[] = [];
  for (const [index, message] of messages.entries()) {
    const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
    const blocks: LooseBlock[] = Array.isArray(content) ? content : [];
    const last = turns.at(-1);
    if (last && last.role === role) last.blocks.push(...blocks);
    else turns.push({ index, role, blocks: [...blocks] });
  }
  return turns;
}
