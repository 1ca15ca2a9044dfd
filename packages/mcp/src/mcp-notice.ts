/** What happens to servers and tools during a session, for the caller to report (stderr, logs). */
export type McpNotice =
  | { readonly type: "server_failed"; readonly server: string; readonly error: string }
  | {
      readonly type: "server_exited";
      readonly server: string;
      readonly error: string;
      /** True when it is being restarted (the first death); false when it stays stopped. */
      readonly restarting: boolean;
    }
  | { readonly type: "server_restarted"; readonly server: string }
  | { readonly type: "tool_skipped"; readonly server: string; readonly tool: string; readonly reason: string }
  | { readonly type: "output_warning"; readonly tool: string; readonly tokens: number };

/** One line for a person, e.g. on stderr. */
export function describeMcpNotice(notice: McpNotice): string {
  switch (notice.type) {
    case "server_failed":
      return `MCP server "${notice.server}" failed: ${notice.error}`;
    case "server_exited":
      return `MCP server "${notice.server}" stopped: ${notice.error}${notice.restarting ? "; restarting it" : "; it was restarted once already and stays stopped"}`;
    case "server_restarted":
      return `MCP server "${notice.server}" restarted`;
    case "tool_skipped":
      return `MCP server "${notice.server}": tool "${notice.tool}" is not offered: ${notice.reason}`;
    case "output_warning":
      return `MCP tool ${notice.tool} returned about ${notice.tokens} tokens (warning above 10000; MAX_MCP_OUTPUT_TOKENS caps it)`;
    default: {
      const unknown: never = notice;
      return String(unknown);
    }
  }
}
