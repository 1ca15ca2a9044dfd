import { testServerConfig } from "@forkloop/mcp/testing";
import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

// The user's ~/.claude.json names one server, --mcp-config another: with --strict-mcp-config only
// the flag's server's tools reach the request. (Claude Code reads it in CLAUDE_CONFIG_DIR, which the
// harness points at <home>/.claude; forkloop reads ~/.claude.json.)
const USER_CONFIG = JSON.stringify({ mcpServers: { configured: testServerConfig() } });

export default {
  what: "--strict-mcp-config: only the --mcp-config servers start (system/init's mcp_servers), not those of ~/.claude.json",
  args: [
    "-p",
    "Say hello.",
    "--mcp-config",
    JSON.stringify({ mcpServers: { flagged: testServerConfig() } }),
    "--strict-mcp-config",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  home: { ".claude.json": USER_CONFIG, ".claude/.claude.json": USER_CONFIG },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
