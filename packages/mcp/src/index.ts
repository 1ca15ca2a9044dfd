export { type ConnectMcpOptions, connectMcpServers, type McpConnections } from "./connect-mcp-servers.js";
export {
  type McpConfigResult,
  type McpConfigSource,
  type McpHttpServerConfig,
  type McpSdkServerConfig,
  type McpServerConfig,
  type McpServerEntry,
  type McpSseServerConfig,
  type McpStdioServerConfig,
  mergeMcpServers,
  parseMcpConfigText,
  parseMcpServers,
  readMcpConfigFile,
} from "./mcp-config.js";
export {
  DEFAULT_MCP_LIMITS,
  type McpLimits,
  type McpLimitsResult,
  mcpLimitsFromEnv,
  OUTPUT_WARNING_TOKENS,
  SAVE_TO_FILE_CHARS,
} from "./mcp-limits.js";
export { describeMcpNotice, type McpNotice } from "./mcp-notice.js";
export type { McpServerStatus } from "./server-connection.js";
export { MAX_TOOL_NAME_LENGTH, mcpToolName, mcpToolPrefix, normalizeMcpName } from "./tool-names.js";
