import { existsSync } from "node:fs";
import type { CacheSafeParams, Message, UserMessage } from "@forkloop/loop-core";
import { sweepIsolatedAgents } from "./isolated-sub-agent.js";
import { answerOpenToolUses, resumedState } from "./resumed-history.js";
import { findInterruptedForks, type InterruptedFork } from "./sub-agent-continuation.js";
import { type ReadTranscript, readTranscript } from "./transcript.js";

/** Where a session starts from: nothing, or its transcript's history with its open calls closed. */
export interface SessionStartPoint {
  /** The transcript read (R-R12: streamed, folded record by record); undefined for a new session. */
  readonly file: ReadTranscript | undefined;
  readonly history: Message[];
  readonly cacheSafeParams: CacheSafeParams | undefined;
  /** R-R13: Agent calls a crash cut off, whose sub-agents continue at the first turn. */
  readonly interruptedForks: InterruptedFork[];
  /** Results for the transcript's other open tool calls, already in `history` (to append). */
  readonly closedToolUses: UserMessage[];
}

/** Reads `transcriptPath` when the session resumes and it exists. */
export async function sessionStartPoint(
  transcriptPath: string,
  resume: { readonly sessionsDir: string; readonly sessionId: string } | undefined,
): Promise<SessionStartPoint> {
  const file =
    resume !== undefined && existsSync(transcriptPath) ? await readTranscript(transcriptPath) : undefined;
  // R-B2: worktrees an isolated sub-agent left (its conflict, its failure, a kill) do not outlive
  // the next run of its session.
  if (resume !== undefined) await sweepIsolatedAgents(resume.sessionsDir, resume.sessionId);
  if (resume === undefined || file === undefined)
    return { file, history: [], cacheSafeParams: undefined, interruptedForks: [], closedToolUses: [] };
  const resumed = resumedState(file);
  const interruptedForks = await findInterruptedForks(resume.sessionsDir, resume.sessionId, resumed.messages);
  const closedToolUses = answerOpenToolUses(
    resumed.messages,
    new Set(interruptedForks.map((fork) => fork.toolUseId)),
  );
  return {
    file,
    history: [...resumed.messages, ...closedToolUses],
    cacheSafeParams: resumed.cacheSafeParams,
    interruptedForks,
    closedToolUses,
  };
}
