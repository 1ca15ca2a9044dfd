// A custom tool, as in the Agent SDK's "Custom tools" guide: tool() with a zod schema, served by
// an in-process MCP server from createSdkMcpServer(), allowed by name.
import { createSdkMcpServer, query, tool } from "@anthropic-ai/claude-agent-sdk";
import { z } from "zod";

const weather = createSdkMcpServer({
  name: "weather",
  version: "1.0.0",
  tools: [
    tool(
      "get_temperature",
      "Current temperature of a city in degrees Celsius",
      { city: z.string() },
      async (args) => {
        console.log(`tool called for ${args.city}`);
        return { content: [{ type: "text", text: `It is 21°C in ${args.city}.` }] };
      },
    ),
  ],
});

for await (const message of query({
  prompt: "How warm is it in Lisbon?",
  options: { mcpServers: { weather }, allowedTools: ["mcp__weather__get_temperature"] },
})) {
  if (message.type === "system" && message.subtype === "init") {
    console.log(`servers: ${message.mcp_servers.map((s) => `${s.name}=${s.status}`).join(", ")}`);
  }
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
