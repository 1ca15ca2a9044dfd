import type { CliScenario } from "../scenario.js";
import unknownTool from "./permission-prompt-tool-unknown.js";

export default {
  ...unknownTool,
  what: "--permission-prompt-tool naming a built-in tool: it must be an MCP tool",
  args: unknownTool.args.map((arg) => (arg === "mcp__perm__nope" ? "Write" : arg)),
} satisfies CliScenario;
