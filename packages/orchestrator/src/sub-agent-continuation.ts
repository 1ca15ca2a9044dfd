import { randomUUID } from "node:crypto";
import { readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  type AssistantMessage,
  type Message,
  type ToolUseBlock,
  toolResultMessage,
  type UserMessage,
} from "@forkloop/loop-core";
import type { AgentPool } from "./agent-pool.js";
import { withProfile } from "./agent-profile.js";
import { forkToolResult } from "./fork-tool-support.js";
import { answerOpenToolUses } from "./resumed-history.js";
import type { ParentCallbacks, SubAgentResult, SubAgentTask } from "./sub-agent-types.js";
import {
  type ReadTranscript,
  readTranscript,
  subAgentTranscriptPath,
  TRANSCRIPT_EXTENSION,
} from "./transcript.js";

/** The tool names whose calls fork a sub-agent (the Agent tool and its alias). */
const FORKING_TOOLS = new Set(["Agent", "Task"]);

/** An Agent call a crash cut off, whose sub-agent's transcript can carry on from where it stopped. */
export interface InterruptedFork {
  readonly toolUseId: string;
  /** The parent's assistant message holding the call (its tool_result points at it). */
  readonly assistantUuid: string;
  readonly agentId: string;
  readonly transcriptPath: string;
  readonly transcript: ReadTranscript;
  /** The call asked for a worktree (`isolation: "worktree"` in its input). */
  readonly isolated?: boolean;
}

/**
 * The Agent calls of the history's last assistant turn that have no result yet and whose
 * sub-agent's transcript (under `<sessionsDir>/<sessionId>/agents/`, linked by the tool_use id
 * in its `session_start`) stopped before its end and recorded its own prefix. A call with no such
 * transcript (one written before R-R13, or a sub-agent that had not started) is not continued.
 */
export async function findInterruptedForks(
  sessionsDir: string,
  sessionId: string,
  history: readonly Message[],
): Promise<InterruptedFork[]> {
  const calls = openForkCalls(history);
  if (calls.size === 0) return [];
  const dir = dirname(subAgentTranscriptPath(sessionsDir, sessionId, "x"));
  const names = await readdir(dir).catch(() => [] as string[]);
  const found: InterruptedFork[] = [];
  for (const name of names.filter((entry) => entry.endsWith(TRANSCRIPT_EXTENSION))) {
    const transcriptPath = join(dir, name);
    const transcript = await readTranscript(transcriptPath).catch(() => undefined);
    const start = transcript?.fold.start;
    const toolUseId = start?.parent?.toolUseId;
    if (transcript === undefined || toolUseId === undefined) continue;
    const call = calls.get(toolUseId);
    if (call === undefined || transcript.fold.terminal !== undefined || transcript.fold.prefix === undefined)
      continue;
    const block = call.message.content.find(
      (entry): entry is ToolUseBlock => entry.type === "tool_use" && entry.id === toolUseId,
    );
    const input = block?.input as { isolation?: unknown } | undefined;
    found.push({
      toolUseId,
      assistantUuid: call.uuid,
      agentId: start?.agentId ?? name,
      transcriptPath,
      transcript,
      isolated: input?.isolation === "worktree",
    });
  }
  return found;
}

/** Open Agent calls of the last assistant turn: tool_use id → the assistant message holding it. */
function openForkCalls(history: readonly Message[]): Map<string, AssistantMessage> {
  const answered = new Set<string>();
  const calls = new Map<string, AssistantMessage>();
  for (let index = history.length - 1; index >= 0; index--) {
    const message = history[index] as Message;
    if (message.type === "user" && typeof message.message.content !== "string") {
      for (const block of message.message.content)
        if (block.type === "tool_result") answered.add(block.tool_use_id);
    } else if (message.type === "assistant") {
      if (message.apiError) continue;
      for (const block of message.message.content) {
        if (block.type === "tool_use" && FORKING_TOOLS.has(block.name) && !answered.has(block.id))
          calls.set((block as ToolUseBlock).id, message);
      }
      // The whole last assistant turn (several messages when its content was split), no earlier.
      if (index > 0 && history[index - 1]?.type !== "assistant") break;
    }
  }
  return calls;
}

/** What a continuation takes from the session that resumes it (its profile, with the mode now). */
export type ContinuationBase = Pick<SubAgentTask, "cwd" | "workspaceRoots" | "profile">;

/**
 * The task that continues an interrupted sub-agent: its own prefix and its own history from its
 * transcript — a cache-safe fork of its own last request, so the request reads what it had
 * written to the cache — with error results for tool calls the crash cut off. Its transcript is
 * appended to, under the same agent id.
 */
export function continuationTask(fork: InterruptedFork, base: ContinuationBase): SubAgentTask | undefined {
  const { fold } = fork.transcript;
  const prefix = fold.prefix;
  const start = fold.start;
  if (prefix === undefined || start === undefined) return undefined;
  const messages = [...fold.messages()];
  const closing = answerOpenToolUses(messages);
  return {
    ...base,
    id: fork.agentId,
    cacheSafeParams: { ...prefix, forkContextMessages: messages },
    promptMessages: closing,
    querySource: start.querySource,
    toolNames: start.toolNames ?? [],
    // The sub-agent's own model (its prefix's) and turn limit; the session's limits are not its.
    profile: withProfile(base.profile, { model: prefix.model, limits: { maxTurns: start.maxTurns } }),
    transcriptPath: fork.transcriptPath,
    ...(start.parent === undefined ? {} : { parent: start.parent }),
    continues: true,
  };
}

/** The parent's tool_result for a continued sub-agent, as the Agent tool would have answered. */
function continuedForkResult(fork: InterruptedFork, result: SubAgentResult): UserMessage {
  return toolResultMessage(fork.toolUseId, forkToolResult("Agent", result), fork.assistantUuid, randomUUID());
}

/**
 * R-R13: the sub-agents a crash cut off go on from their own transcripts (a cache-safe fork of
 * each one's own prefix) before the session's next turn; their reports answer the Agent calls.
 * A fork with no prefix recorded gets the error result its open call would have had.
 */
export async function continueForks(
  forks: readonly InterruptedFork[],
  session: {
    readonly pool: AgentPool;
    readonly base: ContinuationBase;
    readonly history: readonly Message[];
    readonly abortController: AbortController;
    readonly callbacks: ParentCallbacks;
  },
): Promise<UserMessage[]> {
  const { abortController } = session;
  const results = await Promise.all(
    forks.map(async (fork) => {
      const task = continuationTask(fork, session.base);
      if (task === undefined) return answerOpenToolUses(session.history).filter((m) => answersFork(m, fork));
      const handle = session.pool.run(task, session.callbacks);
      const onAbort = () => handle.cancel(String(abortController.signal.reason ?? "interrupted"));
      abortController.signal.addEventListener("abort", onAbort, { once: true });
      try {
        return [continuedForkResult(fork, await handle.result)];
      } finally {
        abortController.signal.removeEventListener("abort", onAbort);
      }
    }),
  );
  return results.flat();
}

function answersFork(message: Message, fork: InterruptedFork): boolean {
  const content = message.type === "user" ? message.message.content : "";
  return (
    typeof content !== "string" &&
    content.some((block) => block.type === "tool_result" && block.tool_use_id === fork.toolUseId)
  );
}
