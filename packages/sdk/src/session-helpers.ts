import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import {
  listSessions as listTranscripts,
  loadTranscript,
  type SessionSummary,
  sessionTranscriptPath,
  TranscriptWriter,
} from "@forkloop/orchestrator";
import { processCommand } from "./lock-owner.js";
import type { SDKAssistantMessage, SDKUserMessage } from "./messages.js";
import { OptionsError } from "./options-error.js";
import { isOwnState, notOwnStateError, recordOwnState } from "./owned-state.js";
import { acquireOwnerLock, type HeldLock } from "./owner-lock.js";
import { checkId, type ProjectState, projectState, sessionsDir, sessionsDirs } from "./state-dirs.js";

/** A new session id: a UUID, as Claude Code's (consumers parse `session_id` as one). */
export function newSessionId(): string {
  return randomUUID();
}

/** A saved session, with the Agent SDK's `SDKSessionInfo` fields (`summary`, `lastModified`). */
export type SessionInfo = SessionSummary & {
  /** The first prompt (200 characters at most), or "" for a session without one. */
  readonly summary: string;
  /** Epoch ms of the transcript's last write. */
  readonly lastModified: number;
};

/** The project state of the helpers' `dir` option (FORKLOOP_HOME from the process environment). */
function stateOf(options: { dir?: string; stateDir?: string }): ProjectState {
  return projectState({
    cwd: resolve(options.dir ?? process.cwd()),
    env: process.env,
    ...(options.stateDir === undefined ? {} : { stateDir: options.stateDir }),
  });
}

/**
 * The saved sessions of a project, newest first: those under the user's forkloop directory
 * (state-dirs.ts), and any left in `<cwd>/.forkloop/sessions` from before.
 */
export async function listSessions(
  options: { dir?: string; stateDir?: string; limit?: number; offset?: number } = {},
): Promise<SessionInfo[]> {
  const offset = options.offset ?? 0;
  return (await listSessionsIn(stateOf(options)))
    .map((summary) => ({
      ...summary,
      summary: summary.firstPrompt ?? "",
      lastModified: Date.parse(summary.updatedAt),
    }))
    .slice(offset, options.limit === undefined ? undefined : offset + options.limit);
}

/** `listSessions` in a resolved project state, newest first. */
export async function listSessionsIn(state: ProjectState): Promise<SessionSummary[]> {
  const summaries = (await Promise.all(sessionsDirs(state).map((dir) => listTranscripts(dir)))).flat();
  // R-S11: a session a checkout shipped is never listed, so `run -c` cannot continue it.
  return summaries
    .filter((summary) => isOwnState(state, summary.path))
    .sort((a, b) => Date.parse(b.updatedAt) - Date.parse(a.updatedAt));
}

/** Where a saved session's transcript is; an unknown or malformed id is an OptionsError. */
export function savedSession(state: ProjectState, sessionId: string): { path: string; sessionsDir: string } {
  checkId("session", sessionId);
  let shipped: string | undefined;
  for (const dir of sessionsDirs(state)) {
    const path = sessionTranscriptPath(dir, sessionId);
    if (!existsSync(path)) continue;
    if (isOwnState(state, path)) return { path, sessionsDir: dir };
    shipped ??= path;
  }
  if (shipped !== undefined)
    throw notOwnStateError(state, `session "${sessionId}"`, shipped, sessionsDir(state));
  throw new OptionsError(
    `no session "${sessionId}" in ${sessionsDirs(state).join(" or ")}. List them with \`forkloop sessions list\` (or listSessions()).`,
  );
}

/** Where a session's lock lives: beside its transcript. */
export function sessionLockPath(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, `${checkId("session", sessionId)}.lock`);
}

/**
 * R-R5: the session's exclusive lock (a second process resuming it exits 2 naming this one):
 * `query()` holds it for the session's life; `forkloop run --repair` while it repairs.
 */
export async function lockSession(sessionsDir: string, sessionId: string): Promise<HeldLock> {
  await mkdir(sessionsDir, { recursive: true, mode: 0o700 });
  return acquireOwnerLock(sessionLockPath(sessionsDir, sessionId), {
    what: `session ${sessionId}`,
    command: processCommand(),
  });
}

/**
 * A saved session's conversation as the Agent SDK's messages (user and assistant, in order;
 * compaction boundaries and notices left out). After a compaction it starts at the summary.
 */
export async function getSessionMessages(
  sessionId: string,
  options: { dir?: string; stateDir?: string } = {},
): Promise<(SDKUserMessage | SDKAssistantMessage)[]> {
  const loaded = await loadTranscript(savedSession(stateOf(options), sessionId).path);
  return loaded.messages.flatMap((message): (SDKUserMessage | SDKAssistantMessage)[] => {
    if (message.type === "user") {
      return [
        {
          type: "user",
          session_id: sessionId,
          uuid: message.uuid,
          message: { role: "user", content: message.message.content as SDKUserMessage["message"]["content"] },
          parent_tool_use_id: null,
          ...(message.isMeta === true ? { isSynthetic: true } : {}),
        },
      ];
    }
    if (message.type === "assistant" && message.apiError === undefined) {
      return [
        {
          type: "assistant",
          session_id: sessionId,
          uuid: message.uuid,
          message: message.message,
          parent_tool_use_id: null,
        },
      ];
    }
    return [];
  });
}

/**
 * Copies a saved session into a new one (the Agent SDK's `forkSession`): the new session starts
 * with the same history and cache-safe prefix, so its first turn reads the old one's prompt
 * cache; the original is untouched. `upToMessageId` keeps the history up to that message.
 */
export async function forkSession(
  sessionId: string,
  options: { dir?: string; stateDir?: string; upToMessageId?: string } = {},
): Promise<{ sessionId: string }> {
  return forkSessionIn(
    stateOf(options),
    resolve(options.dir ?? process.cwd()),
    sessionId,
    options.upToMessageId,
  );
}

/** `forkSession` in a resolved project state; the copy goes where new sessions go. */
export async function forkSessionIn(
  state: ProjectState,
  cwd: string,
  sessionId: string,
  upToMessageId?: string,
): Promise<{ sessionId: string }> {
  const loaded = await loadTranscript(savedSession(state, sessionId).path);
  let messages = loaded.messages;
  if (upToMessageId !== undefined) {
    const index = messages.findIndex((message) => message.uuid === upToMessageId);
    if (index < 0) throw new OptionsError(`session "${sessionId}" has no message ${upToMessageId}.`);
    messages = messages.slice(0, index + 1);
  }
  const forkedId = newSessionId();
  const forkedPath = sessionTranscriptPath(sessionsDir(state), forkedId);
  recordOwnState(state, forkedPath);
  const writer = new TranscriptWriter(forkedPath);
  try {
    writer.append({
      type: "session_start",
      sessionId: forkedId,
      agentId: "main",
      cwd,
      model: loaded.start?.model ?? loaded.cacheSafeParams?.model ?? "",
      querySource: "sdk",
      createdAt: new Date().toISOString(),
    });
    writer.append({ type: "history", messages });
    // The saved prefix matches the whole history only; a cut history starts a fresh prefix.
    if (loaded.cacheSafeParams !== undefined && upToMessageId === undefined) {
      writer.append({ type: "cache_safe_params", params: loaded.cacheSafeParams });
    }
  } finally {
    writer.close();
  }
  return { sessionId: forkedId };
}
