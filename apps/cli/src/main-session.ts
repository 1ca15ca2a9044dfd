import { randomBytes } from "node:crypto";
import type { CanUseTool, LoopEvent, PermissionMode, Terminal, Tool } from "@forkloop/loop-core";
import { createSession, sessionTranscriptPath } from "@forkloop/orchestrator";
import { createSettingsHooks, type Settings } from "@forkloop/tools";
import type { PermissionRules } from "./agent-options.js";
import type { ModelEndpoint } from "./model-endpoint.js";

export interface MainSessionOptions {
  readonly endpoint: ModelEndpoint;
  readonly cwd: string;
  readonly sessionsDir: string;
  readonly prompt: string;
  readonly model: string;
  readonly fallbackModels: readonly string[];
  readonly permissionMode: PermissionMode;
  readonly tools: readonly Tool[];
  readonly permissionRules: PermissionRules;
  readonly canUseTool: CanUseTool;
  /** Settings files: their shell hooks (PreToolUse, PostToolUse, Stop …) run in the loop. */
  readonly settings: Settings;
  /** Non-blocking hook errors and hook system messages, one line each. */
  readonly onHookNotice?: (line: string) => void;
  readonly maxTurns?: number;
  readonly tokenBudget?: number;
  readonly appendSystemPrompt?: string;
  /** The user's home (memory files, skills); default the environment's HOME. */
  readonly home?: string;
  /** Continue this session: its transcript's history comes before the new prompt. */
  readonly resumeSessionId?: string;
  readonly signal: AbortSignal;
}

export interface MainSession {
  readonly sessionId: string;
  readonly transcriptPath: string;
  /** Names of the tools the model gets (the built-ins plus Agent, and Skill when skills exist). */
  readonly toolNames: readonly string[];
  /** The loop's events; the generator returns the Terminal (R-L1) and closes the session. */
  readonly events: AsyncGenerator<LoopEvent, Terminal>;
}

export function newSessionId(): string {
  return `s-${new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${randomBytes(3).toString("hex")}`;
}

/**
 * The main agent of `forkloop run`, on the orchestrator's session: system prompt with memory
 * and git state, the built-in tools plus `Agent`/`Skill` forking into the worker pool, compaction
 * whose compact and session-memory requests are cache-safe forks (R-F3, R-C4, R-C5),
 * CacheSafeParams saved per turn, and a transcript that `--resume`, `sessions` and `replay` read.
 * The CLI adds the settings files' hooks and the headless permission checker.
 */
export async function startMainSession(options: MainSessionOptions): Promise<MainSession> {
  // The id is chosen here (not by createSession) because the hooks need it and the transcript
  // path before the session exists; a resume id with no transcript yet starts a new session.
  const sessionId = options.resumeSessionId ?? newSessionId();
  const transcriptPath = sessionTranscriptPath(options.sessionsDir, sessionId);
  const session = await createSession({
    endpoint: options.endpoint,
    cwd: options.cwd,
    model: options.model,
    permissionMode: options.permissionMode,
    sessionsDir: options.sessionsDir,
    resumeSessionId: sessionId,
    tools: options.tools,
    permissionRules: options.permissionRules,
    canUseTool: options.canUseTool,
    fallbackModels: options.fallbackModels,
    hooks: createSettingsHooks(options.settings, {
      cwd: options.cwd,
      sessionId,
      transcriptPath,
      onNotice: (notice) => options.onHookNotice?.(`hook ${notice.event} ${notice.kind}: ${notice.message}`),
    }),
    additionalDirectories: options.settings.permissions.additionalDirectories ?? [],
    ...(options.home === undefined ? {} : { home: options.home }),
    ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
    ...(options.tokenBudget === undefined ? {} : { tokenBudget: options.tokenBudget }),
    ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
  });
  const toolNames = [
    ...options.tools.map((tool) => tool.name),
    "Agent",
    ...(session.assembled.skills.length > 0 ? ["Skill"] : []),
  ];
  async function* events(): AsyncGenerator<LoopEvent, Terminal> {
    try {
      return yield* session.run(options.prompt, { signal: options.signal });
    } finally {
      await session.close();
    }
  }
  return { sessionId, transcriptPath, toolNames, events: events() };
}
