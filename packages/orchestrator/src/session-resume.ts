import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import {
  type AssistantMessage,
  type CacheSafeParams,
  costUsd,
  estimateMessageTokens,
  type Message,
  type ModelInfo,
  type ResumedCache,
  reportedTokens,
  type SystemMessage,
  toolResultMessage,
  type UserMessage,
} from "@forkloop/loop-core";
import { answerOpenToolUses, resumedState } from "./resumed-history.js";
import { findInterruptedForks, type InterruptedFork } from "./sub-agent-continuation.js";
import { type ReadTranscript, readTranscript, sessionTranscriptPath } from "./transcript.js";

/** Where a session starts from: nothing, or its transcript's history with its open calls closed. */
export interface SessionStartPoint {
  /** The resumed session's id, else a new one (its date and a random part). */
  readonly sessionId: string;
  readonly transcriptPath: string;
  /** The transcript read (R-R12: streamed, folded record by record); undefined for a new session. */
  readonly file: ReadTranscript | undefined;
  readonly history: Message[];
  readonly cacheSafeParams: CacheSafeParams | undefined;
  /** R-R13: Agent calls a crash cut off, whose sub-agents continue at the first turn. */
  readonly interruptedForks: InterruptedFork[];
  /** Results for the transcript's other open tool calls, already in `history` (to append). */
  readonly closedToolUses: UserMessage[];
}

/** Opens a session: a new one, or `resumeSessionId`'s from its transcript (when it exists). */
export async function sessionStartPoint(
  sessionsDir: string,
  resumeSessionId: string | undefined,
): Promise<SessionStartPoint> {
  const sessionId =
    resumeSessionId ?? `s-${new Date().toISOString().slice(0, 10)}-${randomUUID().slice(0, 8)}`;
  const transcriptPath = sessionTranscriptPath(sessionsDir, sessionId);
  const resume = resumeSessionId === undefined ? undefined : { sessionsDir, sessionId };
  const file =
    resume !== undefined && existsSync(transcriptPath) ? await readTranscript(transcriptPath) : undefined;
  // R-B2: worktrees an isolated sub-agent left (its conflict, its failure, a kill) do not outlive
  // the next run of its session. Which sub-agents were isolated is read first: the sweep removes it.
  let isolated = new Set<string>();
  if (resume !== undefined) {
    // The sweep's worktree machinery loads when a session resumes (R-V2: not with the SDK).
    const { isolatedAgentsDir, sweepIsolatedAgents } = await import("./isolated-sub-agent.js");
    isolated = new Set(
      await readdir(isolatedAgentsDir(resume.sessionsDir, resume.sessionId)).catch(() => []),
    );
    await sweepIsolatedAgents(resume.sessionsDir, resume.sessionId);
  }
  const opened = { sessionId, transcriptPath, file };
  if (resume === undefined || file === undefined)
    return { ...opened, history: [], cacheSafeParams: undefined, interruptedForks: [], closedToolUses: [] };
  const resumed = resumedState(file);
  const found = await findInterruptedForks(resume.sessionsDir, resume.sessionId, resumed.messages);
  // R-R13, R-B2: an isolated sub-agent's edits were in its worktree, which the sweep removed (a
  // finished apply aside): continued, it would edit the tree itself, believing its own edits are
  // there. It is not continued; its call's result says so, and the parent can call it again.
  const wasIsolated = (fork: InterruptedFork) => fork.isolated === true || isolated.has(fork.agentId);
  const interruptedForks = found.filter((fork) => !wasIsolated(fork));
  const notContinued = found.filter(wasIsolated).map((fork) =>
    toolResultMessage(
      fork.toolUseId,
      {
        content: `The session stopped while this sub-agent worked in its own worktree (isolation: "worktree"); its worktree and the edits in it were removed when the session resumed, so it is not continued. Call it again to redo its task.`,
        isError: true,
      },
      fork.assistantUuid,
      randomUUID(),
    ),
  );
  const closedToolUses = [
    ...answerOpenToolUses(resumed.messages, new Set(found.map((fork) => fork.toolUseId))),
    ...notContinued,
  ];
  return {
    ...opened,
    history: [...resumed.messages, ...closedToolUses],
    cacheSafeParams: resumed.cacheSafeParams,
    interruptedForks,
    closedToolUses,
  };
}

/**
 * The prompt cache's lifetime: forkloop's cache breakpoints ask for the default, 5 minutes (the
 * Messages API's prompt caching: "The cache has a minimum 5-minute lifetime", refreshed by each use).
 */
export const PROMPT_CACHE_TTL_SECONDS = 300;

/**
 * What a resumed session's SessionStart tells of its prompt cache (R-X1, Claude Code's `resume`
 * fields): the seconds since the transcript's last reply; the tokens that reply's request held
 * (input + cache reads + cache writes + output) — after a compaction no reply has followed, its
 * post-compaction tokens, and with no reply at all an estimate of the history; whether the cache
 * has likely expired (older than its lifetime, or never written: a compaction's summary is sent
 * first by the next request); and the list price of writing those tokens to the 5-minute cache
 * on `model` (1.25× its input price), rounded to 1/100 cent. Undefined without a reply to date.
 */
export function resumedCache(
  history: readonly Message[],
  model: ModelInfo,
  now: number = Date.now(),
): ResumedCache | undefined {
  // A reply the API gave, not an API error's stand-in.
  const last = history.findLast(
    (message): message is AssistantMessage => message.type === "assistant" && message.apiError === undefined,
  );
  const repliedAt = last === undefined ? Number.NaN : Date.parse(last.timestamp);
  if (last === undefined || Number.isNaN(repliedAt)) return undefined;
  const boundaryIndex = history.findLastIndex(
    (message) => message.type === "system" && message.subtype === "compact_boundary",
  );
  const boundary = boundaryIndex < 0 ? undefined : (history[boundaryIndex] as SystemMessage);
  // A compaction's kept tail predates its boundary: its replies' requests held the old history.
  const reply = history
    .slice(boundaryIndex + 1)
    .findLast(
      (message): message is AssistantMessage =>
        message.type === "assistant" &&
        (boundary === undefined || message.timestamp >= boundary.timestamp) &&
        reportedTokens(message) > 0,
    );
  const contextTokens =
    reply !== undefined
      ? reportedTokens(reply)
      : (boundary?.compactMetadata?.postTokens ??
        history.slice(boundaryIndex + 1).reduce((sum, message) => sum + estimateMessageTokens(message), 0));
  const seconds = (at: number) => Math.max(0, Math.round((now - at) / 1000));
  // Cached by a reply since the last compaction (or with none at all): as old as that reply.
  const cachedAt = boundary === undefined || reply !== undefined ? repliedAt : Number.NaN;
  const write = costUsd(model, {
    input_tokens: 0,
    output_tokens: 0,
    cache_creation_input_tokens: contextTokens,
  });
  return {
    secondsSinceLastResponse: seconds(repliedAt),
    contextTokens,
    promptCacheLikelyExpired: Number.isNaN(cachedAt) || seconds(cachedAt) >= PROMPT_CACHE_TTL_SECONDS,
    estimatedCacheWriteUsd: Math.round(write * 1e4) / 1e4,
  };
}
