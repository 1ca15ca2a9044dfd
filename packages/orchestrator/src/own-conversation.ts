import type { CacheSafeParams, MessageParam } from "@forkloop/loop-core";

/**
 * R-K3: a custom agent (an `agents` definition, a `.forkloop/agents` file) runs as a conversation
 * of its own, as the Agent SDK runs it — not as a fork of its parent. Its system prompt is the
 * agent's prompt followed by the session's block (environment, memory files, git status,
 * permission mode: block 1 of `assembleSession`, after the parent's identity block 0); it is
 * offered only its own tools; its first and only user message is the task. So a model that would
 * read the parent's instruction as its own (and delegate again) never sees it.
 *
 * Every instance of one agent type builds the same prefix (system + tools, byte for byte), so a
 * fan-out of them shares one cache entry: the first writes it, the others read it (the session's
 * FanOutWarmer holds them until its response has started, R-F4).
 */
export function ownConversationParams(
  parent: CacheSafeParams,
  agent: { readonly prompt: string; readonly model?: string | undefined },
  toolNames: readonly string[],
): CacheSafeParams {
  const allowed = new Set(toolNames);
  return {
    ...parent,
    model: agent.model ?? parent.model,
    systemPrompt: [
      { type: "text", text: agent.prompt, cache_control: { type: "ephemeral" } },
      ...parent.systemPrompt.slice(1),
    ],
    tools: parent.tools.filter((tool) => "name" in tool && allowed.has(tool.name)),
    forkContextMessages: [],
  };
}

/** The task as the agent's only user message. */
export function ownConversationPrompt(task: string): MessageParam[] {
  return [{ role: "user", content: task }];
}
