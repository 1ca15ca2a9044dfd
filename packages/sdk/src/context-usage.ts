import {
  estimateTextTokens,
  getModelInfo,
  type Message,
  type ModelInfo,
  thresholdsFor,
  tokenCountWithEstimation,
} from "@forkloop/loop-core";
import type { MainSession } from "@forkloop/orchestrator";
import type { SDKControlGetContextUsageResponse } from "./agent-sdk-types/control-types.js";

type Category = SDKControlGetContextUsageResponse["categories"][number];

/**
 * The Agent SDK's `getContextUsage()` from a session's prefix and history: the system prompt and
 * tool definitions as last sent (estimated from their text), the conversation (the latest
 * response's reported input plus an estimate of what came after it, R-C8 — the number the
 * auto-compact line is checked against), and what is left of the model's window.
 */
export function contextUsage(
  session: MainSession | undefined,
  model: string,
  overrides: readonly ModelInfo[],
  autoCompactWindow?: number,
): SDKControlGetContextUsageResponse {
  const info = getModelInfo(model, overrides);
  const thresholds = thresholdsFor(info, autoCompactWindow);
  const prefix = session?.cacheSafeParams();
  const history: readonly Message[] = session?.history() ?? [];
  const systemText = (prefix?.systemPrompt ?? session?.assembled.systemPrompt ?? [])
    .map((block) => block.text)
    .join("\n");
  const tools = prefix?.tools ?? [];
  const nameOf = (tool: object) => ("name" in tool && typeof tool.name === "string" ? tool.name : "");
  const isMcp = (tool: object) => nameOf(tool).startsWith("mcp__");
  const system = estimateTextTokens(systemText);
  const builtinTools = estimateTextTokens(JSON.stringify(tools.filter((tool) => !isMcp(tool))));
  const mcpTools = tools.filter(isMcp).map((tool) => ({
    name: nameOf(tool),
    serverName: nameOf(tool).split("__")[1] ?? "",
    tokens: estimateTextTokens(JSON.stringify(tool)),
    isLoaded: true,
  }));
  const mcp = mcpTools.reduce((sum, tool) => sum + tool.tokens, 0);
  const prompt = system + builtinTools + mcp;
  const counted = history.length === 0 ? 0 : tokenCountWithEstimation(history);
  // A reported count covers the prefix too; before any response only the estimate exists.
  const messages = Math.max(0, counted > prompt ? counted - prompt : counted);
  const totalTokens = prompt + messages;
  const free = Math.max(0, thresholds.autoCompact - totalTokens);
  const buffer = Math.max(0, info.contextWindow - Math.max(thresholds.autoCompact, totalTokens));
  const categories: Category[] = [
    { id: "system_prompt", name: "System prompt", tokens: system, color: "promptBorder", kind: "used" },
    { id: "system_tools", name: "System tools", tokens: builtinTools, color: "inactive", kind: "used" },
    ...(mcp > 0
      ? [
          {
            id: "mcp_tools",
            name: "MCP tools",
            tokens: mcp,
            color: "cyan_FOR_SUBAGENTS_ONLY",
            kind: "used",
          } as const,
        ]
      : []),
    { id: "messages", name: "Messages", tokens: messages, color: "purple_FOR_SUBAGENTS_ONLY", kind: "used" },
    { id: "free_space", name: "Free space", tokens: free, color: "promptBorder", kind: "free" },
    {
      id: "autocompact_buffer",
      name: "Autocompact buffer",
      tokens: buffer,
      color: "inactive",
      kind: "buffer",
    },
  ];
  const last = [...history]
    .reverse()
    .find((message) => message.type === "assistant" && message.apiError === undefined);
  const usage = last?.type === "assistant" ? last.message.usage : undefined;
  return {
    categories,
    totalTokens,
    maxTokens: info.contextWindow,
    rawMaxTokens: info.contextWindow,
    percentage: Math.round((totalTokens / info.contextWindow) * 1000) / 10,
    gridRows: [],
    model: info.id,
    memoryFiles: (session?.assembled.memoryFiles ?? []).map((file) => ({
      path: file.path,
      type: file.scope === "user" ? "User" : "Project",
      tokens: estimateTextTokens(file.content),
    })),
    mcpTools,
    agents: (session?.assembled.agentDefinitions ?? []).map((agent) => ({
      agentType: agent.name,
      source: "projectSettings",
      tokens: estimateTextTokens(`${agent.name}: ${agent.description}`),
    })),
    autoCompactThreshold: thresholds.autoCompact,
    isAutoCompactEnabled: true,
    apiUsage:
      usage === undefined
        ? null
        : {
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            cache_creation_input_tokens: usage.cache_creation_input_tokens ?? 0,
            cache_read_input_tokens: usage.cache_read_input_tokens ?? 0,
          },
  };
}
