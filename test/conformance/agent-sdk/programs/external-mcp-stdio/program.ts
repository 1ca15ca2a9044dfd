// An external MCP server over stdio, as in the Agent SDK's "MCP" guide: the reference filesystem
// server started for the working directory, one of its tools allowed.
import { createRequire } from "node:module";
import { query } from "@anthropic-ai/claude-agent-sdk";

const server = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-filesystem/dist/index.js",
);

for await (const message of query({
  prompt: "Which files are in this directory?",
  options: {
    mcpServers: { files: { command: process.execPath, args: [server, process.cwd()] } },
    allowedTools: ["mcp__files__list_directory"],
  },
})) {
  if (message.type === "system" && message.subtype === "init") {
    console.log(message.mcp_servers.map((s) => `${s.name}: ${s.status}`).join(", "));
  }
  if (message.type === "result" && message.subtype === "success") console.log(message.result);
}
