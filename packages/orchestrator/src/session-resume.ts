import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { type CacheSafeParams, type Message, toolResultMessage, type UserMessage } from "@forkloop/loop-core";
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
  if (resume === undefined || file === undefined)
    return { file, history: [], cacheSafeParams: undefined, interruptedForks: [], closedToolUses: [] };
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
    file,
    history: [...resumed.messages, ...closedToolUses],
    cacheSafeParams: resumed.cacheSafeParams,
    interruptedForks,
    closedToolUses,
  };
}
