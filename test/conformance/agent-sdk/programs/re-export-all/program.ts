// A module that re-exports every value the Agent SDK declares (as a wrapper library or a
// framework adapter does), then lists every value the module namespace has at run time (the SDK
// also exports a few values its declarations leave out). An export the SDK under test lacks is a
// link error: the program does not start.
export {
  AbortError,
  archiveSession,
  BUILTIN_TOOL_NAMES,
  createSdkMcpServer,
  deleteSession,
  EXIT_REASONS,
  filterEscalatingDefaultMode,
  foldSessionSummary,
  forkSession,
  getSessionInfo,
  getSessionMessages,
  getSubagentMessages,
  HOOK_EVENTS,
  InMemorySessionStore,
  importSessionToStore,
  LEGACY_TOOL_NAME_ALIASES,
  listSessions,
  listSubagents,
  matchDeniedModels,
  ORG_POLICY_LIMIT_PREFIXES,
  prewarm,
  query,
  renameSession,
  resolveSettings,
  SYSTEM_PROMPT_DYNAMIC_BOUNDARY,
  startup,
  tagSession,
  tool,
  USAGE_LIMIT_ERROR_PREFIXES,
  USAGE_TRANSITION_PREFIXES,
  USAGE_WARNING_PREFIXES,
  unarchiveSession,
} from "@anthropic-ai/claude-agent-sdk";

import * as sdk from "@anthropic-ai/claude-agent-sdk";

for (const name of Object.keys(sdk).sort())
  console.log(`${name}: ${typeof (sdk as Record<string, unknown>)[name]}`);
