import { type ApiError, invalidRequest } from "./api-error.js";
import { type CountTokensRequest, customToolSchema } from "./request-schema.js";
import { describeIssue, quotedList } from "./schema-issues.js";

/**
 * The name each versioned tool must carry (SDK 1.14's `ToolUnion` and beta tool unions); `null`
 * for toolsets whose name is free. A tag outside this table is refused like any unknown tag.
 */
const VERSIONED_TOOL_NAMES: Readonly<Record<string, string | null>> = {
  bash_20241022: "bash",
  bash_20250124: "bash",
  code_execution_20250522: "code_execution",
  code_execution_20250825: "code_execution",
  code_execution_20260120: "code_execution",
  code_execution_20260521: "code_execution",
  computer_20241022: "computer",
  computer_20250124: "computer",
  computer_20251124: "computer",
  memory_20250818: "memory",
  text_editor_20241022: "str_replace_editor",
  text_editor_20250124: "str_replace_editor",
  text_editor_20250429: "str_replace_based_edit_tool",
  text_editor_20250728: "str_replace_based_edit_tool",
  web_search_20250305: "web_search",
  web_search_20260209: "web_search",
  web_search_20260318: "web_search",
  web_fetch_20250910: "web_fetch",
  web_fetch_20260209: "web_fetch",
  web_fetch_20260309: "web_fetch",
  web_fetch_20260318: "web_fetch",
  tool_search_tool_bm25_20251119: "tool_search_tool_bm25",
  tool_search_tool_regex_20251119: "tool_search_tool_regex",
  browser_toolset_20260801: null,
  computer_toolset_20260801: null,
  advisor_20260301: null,
  mcp_toolset: null,
};

const TOOL_TAGS = ["custom", ...Object.keys(VERSIONED_TOOL_NAMES)];

/**
 * The fields each versioned tool takes (SDK 1.14's GA and beta tool params, read from its type
 * definitions): any other key is `tools.N.<type>.<key>: Extra inputs are not permitted`, as for
 * custom tools. Toolsets missing here keep their fields unchecked (UNCONFIRMED).
 */
const COMMON = ["type", "name", "cache_control", "defer_loading", "allowed_callers", "strict"];
const CLIENT = [...COMMON, "input_examples"];
const COMPUTER = [...CLIENT, "display_height_px", "display_width_px", "display_number"];
const SEARCH = [...COMMON, "allowed_domains", "blocked_domains", "max_uses", "user_location"];
const FETCH = [
  ...COMMON,
  "allowed_domains",
  "blocked_domains",
  "citations",
  "max_content_tokens",
  "max_uses",
  "url_sources",
];
const VERSIONED_TOOL_FIELDS: Readonly<Record<string, readonly string[]>> = {
  advisor_20260301: [...COMMON, "caching", "max_tokens", "max_uses", "model"],
  bash_20241022: CLIENT,
  bash_20250124: CLIENT,
  code_execution_20250522: COMMON,
  code_execution_20250825: COMMON,
  code_execution_20260120: COMMON,
  code_execution_20260521: COMMON,
  computer_20241022: COMPUTER,
  computer_20250124: COMPUTER,
  computer_20251124: [...COMPUTER, "enable_zoom"],
  mcp_toolset: ["type", "cache_control", "configs", "default_config", "mcp_server_name", "tools"],
  memory_20250818: CLIENT,
  text_editor_20241022: CLIENT,
  text_editor_20250124: CLIENT,
  text_editor_20250429: CLIENT,
  text_editor_20250728: [...CLIENT, "max_characters"],
  web_fetch_20250910: FETCH,
  web_fetch_20260209: FETCH,
  web_fetch_20260309: [...FETCH, "use_cache"],
  web_fetch_20260318: [...FETCH, "use_cache", "response_inclusion"],
  web_search_20250305: SEARCH,
  web_search_20260209: SEARCH,
  web_search_20260318: [...SEARCH, "response_inclusion"],
};

/** Each tool definition by its tag (absent = custom), with the API's union-tagged paths. */
export function checkToolDefinitions(body: CountTokensRequest, raw: unknown): ApiError | null {
  for (const [i, tool] of (body.tools ?? []).entries()) {
    const type = (tool as { type?: unknown }).type;
    if (type === undefined || type === null || type === "custom") {
      const parsed = customToolSchema.safeParse(tool);
      const issue = parsed.error?.issues[0];
      if (issue) return invalidRequest(describeIssue(issue, raw, ["tools", i]));
      continue;
    }
    if (typeof type !== "string" || !(type in VERSIONED_TOOL_NAMES)) {
      return invalidRequest(
        `tools.${i}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${TOOL_TAGS.map((t) => `'${t}'`).join(", ")}`,
      );
    }
    const name = VERSIONED_TOOL_NAMES[type];
    const given = (tool as { name?: unknown }).name;
    if (name && given !== name) {
      const message = given === undefined ? "Field required" : `Input should be ${quotedList([name])}`;
      return invalidRequest(`tools.${i}.${type}.name: ${message}`);
    }
    const extra = Object.keys(tool).find((key) => !(VERSIONED_TOOL_FIELDS[type]?.includes(key) ?? true));
    if (extra !== undefined)
      return invalidRequest(`tools.${i}.${type}.${extra}: Extra inputs are not permitted`);
  }
  return null;
}
