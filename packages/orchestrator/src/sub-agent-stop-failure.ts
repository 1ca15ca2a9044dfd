import type { LoopHooks, Terminal, ToolUseContext } from "@forkloop/loop-core";

/**
 * R-K2: a run that ended on an API error fires the StopFailure hooks instead of Stop, as Claude
 * Code's sub-agents do (the Agent SDK calls a program's with the sub-agent's agent_id). They only
 * observe: one that fails is ignored, the run has ended.
 */
export async function fireStopFailure(
  hooks: LoopHooks | undefined,
  terminal: Terminal,
  context: ToolUseContext,
): Promise<void> {
  const stopFailure = hooks?.stopFailure;
  if (stopFailure === undefined || stopFailure.length === 0 || terminal.reason !== "model_error") return;
  const failed = terminal.messages.at(-1);
  if (failed?.type !== "assistant" || failed.apiError === undefined) return;
  const text = failed.message.content.map((block) => (block.type === "text" ? block.text : "")).join("");
  for (const hook of stopFailure) {
    await hook({ apiError: failed.apiError, text, context }).catch(() => undefined);
  }
}
