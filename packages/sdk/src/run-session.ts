import { randomBytes } from "node:crypto";
import type { LoopEvent, Terminal, Tool } from "@forkloop/loop-core";
import {
  createSession,
  type MainSessionOptions,
  type SessionCompactResult,
  sessionTranscriptPath,
} from "@forkloop/orchestrator";
import type { Settings } from "@forkloop/tools";
import { settingsHooks } from "./settings.js";

/**
 * What `forkloop run` adds to the orchestrator's session options: the settings files (their
 * shell hooks and extra directories), the prompt and the Ctrl+C signal. Everything else passes
 * through unchanged.
 */
export type RunSessionOptions = Omit<MainSessionOptions, "hooks" | "additionalDirectories" | "tools"> & {
  /** The main agent's built-in tools (`Agent`, and `Skill` when skills exist, are added). */
  readonly tools: readonly Tool[];
  /** Settings files: their shell hooks (PreToolUse, PostToolUse, Stop …) run in the loop. */
  readonly settings: Settings;
  /** Non-blocking hook errors and hook system messages, one line each. */
  readonly onHookNotice?: (line: string) => void;
  readonly prompt: string;
  readonly signal: AbortSignal;
};

export interface RunSession {
  readonly sessionId: string;
  readonly transcriptPath: string;
  /** Names of the tools the model gets (for the stream-json init line). */
  readonly toolNames: readonly string[];
  /** The loop's events; the generator returns the Terminal (R-L1) and closes the session. */
  readonly events: AsyncGenerator<LoopEvent, Terminal>;
  /** `/compact [instructions]` instead of a turn: one compact fork, then the session closes. */
  compact(instructions: string): Promise<SessionCompactResult>;
}

function newSessionId(): string {
  return `s-${new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${randomBytes(3).toString("hex")}`;
}

/**
 * `forkloop run` on the orchestrator's session (`createSession`: system prompt, Agent/Skill forks,
 * compaction, transcript). The CLI only adds the settings files' hooks, which need the session id
 * and transcript path before the session exists — so the id is chosen here and handed over as
 * `resumeSessionId` (an id with no transcript yet starts a new session).
 */
export async function startRunSession(options: RunSessionOptions): Promise<RunSession> {
  const { settings, onHookNotice, prompt, signal, ...sessionOptions } = options;
  const sessionId = options.resumeSessionId ?? newSessionId();
  const transcriptPath = sessionTranscriptPath(options.sessionsDir, sessionId);
  const session = await createSession({
    ...sessionOptions,
    resumeSessionId: sessionId,
    hooks: settingsHooks(settings, { cwd: options.cwd, sessionId, transcriptPath, onNotice: onHookNotice }),
    additionalDirectories: settings.permissions.additionalDirectories ?? [],
  });
  const toolNames = [
    ...options.tools.map((tool) => tool.name),
    "Agent",
    ...(session.assembled.skills.length > 0 ? ["Skill"] : []),
  ];
  async function* events(): AsyncGenerator<LoopEvent, Terminal> {
    try {
      return yield* session.run(prompt, { signal });
    } finally {
      await session.close();
    }
  }
  async function compact(instructions: string): Promise<SessionCompactResult> {
    try {
      return await session.compact(instructions, { signal });
    } finally {
      await session.close();
    }
  }
  return { sessionId, transcriptPath, toolNames, events: events(), compact };
}
