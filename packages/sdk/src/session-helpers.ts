import { randomUUID } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, stat } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { Message } from "@forkloop/loop-core";
import {
  listSessions as listTranscripts,
  loadTranscript,
  type SessionSummary,
  sessionTranscriptPath,
  TranscriptWriter,
} from "@forkloop/orchestrator";
import { historyUpToLine } from "./line-uuids.js";
import { processCommand } from "./lock-owner.js";
import type { SDKAssistantMessage, SDKUserMessage } from "./messages.js";
import { OptionsError } from "./options-error.js";
import { isOwnState, notOwnStateError, recordOwnState } from "./owned-state.js";
import { acquireOwnerLock, type HeldLock } from "./owner-lock.js";
import { readSessionMetadata, type SessionMetadata, writeSessionMetadata } from "./session-metadata.js";
import { checkId, type ProjectState, projectState, sessionsDir, sessionsDirs } from "./state-dirs.js";

/** A new session id: a UUID, as Claude Code's (consumers parse `session_id` as one). */
export function newSessionId(): string {
  return randomUUID();
}

/**
 * A saved session, with the Agent SDK's `SDKSessionInfo` fields: `summary` (its title, else its
 * first prompt), `lastModified` and `createdAt` in epoch ms, `fileSize`, and the title, tag and
 * archived mark session-management.ts keeps beside the transcript.
 */
export type SessionInfo = Omit<SessionSummary, "createdAt"> &
  SessionMetadata & {
    /** The custom title, else the first prompt (200 characters at most), else "". */
    readonly summary: string;
    /** Epoch ms of the transcript's last write. */
    readonly lastModified: number;
    /** Epoch ms of the session's start, when its transcript says. */
    readonly createdAt?: number;
    /** The transcript's size in bytes. */
    readonly fileSize?: number;
  };

/** A message of a saved conversation (the Agent SDK's `SessionMessage`, with forkloop's precise payloads). */
export type SessionMessage = (SDKUserMessage | SDKAssistantMessage) & {
  readonly uuid: string;
  readonly session_id: string;
  /** The sub-agent that started this one (null: the main session or a sub-agent of it). */
  readonly parent_agent_id: string | null;
};

/** The helpers' options: `dir` is the project directory (default cwd); `stateDir` forkloop's own. */
export interface ListSessionsOptions {
  dir?: string;
  stateDir?: string;
  limit?: number;
  offset?: number;
  /** Accepted for the Agent SDK's signature: forkloop keys sessions by project, worktrees included. */
  includeWorktrees?: boolean;
  /** Accepted for the Agent SDK's signature: every forkloop session is programmatic. */
  includeProgrammatic?: boolean;
}
export interface GetSessionMessagesOptions {
  dir?: string;
  stateDir?: string;
  limit?: number;
  offset?: number;
}
export interface ForkSessionOptions {
  dir?: string;
  stateDir?: string;
  /** Keep the history up to this message (its uuid, from getSessionMessages). */
  upToMessageId?: string;
  /** The fork's title; default: the original's title + " (fork)", when it has one. */
  title?: string;
}
export interface ForkSessionResult {
  sessionId: string;
}

/** The project state of the helpers' `dir` option (FORKLOOP_HOME from the process environment). */
export function stateOf(options: { dir?: string; stateDir?: string }): ProjectState {
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
export async function listSessions(options: ListSessionsOptions = {}): Promise<SessionInfo[]> {
  const offset = options.offset ?? 0;
  const summaries = (await listSessionsIn(stateOf(options))).slice(
    offset,
    options.limit === undefined ? undefined : offset + options.limit,
  );
  return Promise.all(summaries.map((summary) => sessionInfoOf(summary)));
}

/** A session's listing entry with its metadata and file size, as the Agent SDK's SDKSessionInfo. */
export async function sessionInfoOf(summary: SessionSummary): Promise<SessionInfo> {
  const { createdAt, ...rest } = summary;
  const [metadata, size] = await Promise.all([
    readSessionMetadata(dirname(summary.path), summary.sessionId),
    stat(summary.path).then(
      (info) => info.size,
      () => undefined,
    ),
  ]);
  return {
    ...rest,
    ...metadata,
    summary: metadata.customTitle ?? summary.firstPrompt ?? "",
    lastModified: Date.parse(summary.updatedAt),
    ...(createdAt === undefined ? {} : { createdAt: Date.parse(createdAt) }),
    ...(size === undefined ? {} : { fileSize: size }),
  };
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
  options: GetSessionMessagesOptions = {},
): Promise<SessionMessage[]> {
  const loaded = await loadTranscript(savedSession(stateOf(options), sessionId).path);
  return page(sessionMessagesOf(loaded.messages, sessionId), options);
}

/** `limit` and `offset`, as the Agent SDK's listing helpers take them. */
export function page<T>(items: readonly T[], options: { limit?: number; offset?: number }): T[] {
  const offset = options.offset ?? 0;
  return items.slice(offset, options.limit === undefined ? undefined : offset + options.limit);
}

/** A transcript's conversation as the Agent SDK's messages (compaction notices and API errors left out). */
export function sessionMessagesOf(messages: readonly Message[], sessionId: string): SessionMessage[] {
  return messages.flatMap((message): SessionMessage[] => {
    if (message.type === "user") {
      return [
        {
          type: "user",
          session_id: sessionId,
          uuid: message.uuid,
          message: { role: "user", content: message.message.content as SDKUserMessage["message"]["content"] },
          parent_tool_use_id: null,
          parent_agent_id: null,
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
          parent_agent_id: null,
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
  options: ForkSessionOptions = {},
): Promise<ForkSessionResult> {
  const state = stateOf(options);
  const original = savedSession(state, sessionId);
  const forked = await forkSessionIn(
    state,
    resolve(options.dir ?? process.cwd()),
    sessionId,
    options.upToMessageId,
  );
  const title = options.title ?? (await readSessionMetadata(original.sessionsDir, sessionId)).customTitle;
  if (title !== undefined) {
    await writeSessionMetadata(sessionsDir(state), forked.sessionId, {
      customTitle: options.title ?? `${title} (fork)`,
    });
  }
  return forked;
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
    // A transcript id, or the uuid of any line the stream yielded (line-uuids.ts).
    const upTo = historyUpToLine(messages, upToMessageId);
    if (upTo === undefined) throw new OptionsError(`session "${sessionId}" has no message ${upToMessageId}.`);
    messages = upTo;
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
