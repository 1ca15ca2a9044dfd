import { join } from "node:path";
import type { ToolUseContext } from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import type { AgentProfile } from "./agent-profile.js";
import { agentPipeline } from "./agent-runner.js";
import type { MainSessionOptions } from "./main-session-types.js";
import { createPoolCompactRunner, type StartedFork } from "./pool-compact-runner.js";
import { subAgentTranscriptPath } from "./transcript.js";

/**
 * §4 for the main session: its compact and session-memory requests are forks in the pool (R-C4,
 * R-C5, R-F1), children in the fork tree with transcripts of their own, and its session memory
 * (unless turned off) lives beside them, in `<sessionsDir>/<sessionId>/`.
 */
export function sessionPipeline(
  pool: AgentPool,
  options: Pick<
    MainSessionOptions,
    "sessionsDir" | "hooks" | "sessionMemory" | "sessionMemoryIntervalTokens" | "onCompactionEvent"
  >,
  session: {
    readonly cwd: string;
    readonly sessionId: string;
    readonly profile: AgentProfile;
    /** What the hooks see: the context of the turn in flight (or a fresh one between turns). */
    readonly context: () => ToolUseContext;
    readonly onForkStarted: (fork: StartedFork) => void;
  },
) {
  const { sessionsDir, hooks } = options;
  const { cwd, sessionId, context } = session;
  return agentPipeline({
    profile: session.profile,
    hooks,
    context,
    runCompact: createPoolCompactRunner(pool, {
      cwd,
      transcriptPath: (agentId) => subAgentTranscriptPath(sessionsDir, sessionId, agentId),
      parent: { sessionId, agentId: "main" },
      onForkStarted: session.onForkStarted,
      ...(hooks === undefined ? {} : { hooks }),
      permissionMode: () => context().options.permissionMode,
    }),
    sessionMemory:
      options.sessionMemory === false
        ? undefined
        : {
            dir: join(sessionsDir, sessionId),
            ...(options.sessionMemoryIntervalTokens === undefined
              ? {}
              : { intervalTokens: options.sessionMemoryIntervalTokens }),
          },
    onEvent: options.onCompactionEvent,
  });
}
