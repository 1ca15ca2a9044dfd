import { existsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import {
  loadTranscript,
  sessionTranscriptPath,
  subAgentTranscriptPath,
  TRANSCRIPT_EXTENSION,
} from "@forkloop/orchestrator";
import { OptionsError } from "./options-error.js";
import {
  listSessionsIn,
  lockSession,
  page,
  type SessionInfo,
  type SessionMessage,
  savedSession,
  sessionInfoOf,
  sessionMessagesOf,
  stateOf,
} from "./session-helpers.js";
import {
  metadataPath,
  readSessionMetadata,
  type SessionMetadata,
  writeSessionMetadata,
} from "./session-metadata.js";

/**
 * The Agent SDK's session management (`renameSession`, `tagSession`, `archiveSession`,
 * `deleteSession`, `getSessionInfo`, `listSubagents`, `getSubagentMessages`) on forkloop's saved
 * sessions. `dir` is the project directory (default: the process's cwd); forkloop's `stateDir`
 * says where its sessions are kept, as the query option does.
 */
export interface SessionMutationOptions {
  dir?: string;
  /** forkloop: where the project's sessions are kept (the `stateDir` query option). */
  stateDir?: string;
  /** Not supported: forkloop keeps sessions in its own state directory (an error names it). */
  sessionStore?: unknown;
}
export type GetSessionInfoOptions = SessionMutationOptions;
export type ListSubagentsOptions = SessionMutationOptions;
export type GetSubagentMessagesOptions = SessionMutationOptions & { limit?: number; offset?: number };

/** A session store is the Agent SDK's mirror of Claude Code's transcripts; forkloop has none. */
function refuseSessionStore(call: string, options: SessionMutationOptions): void {
  if (options.sessionStore !== undefined) {
    throw new OptionsError(
      `${call}: the sessionStore option is not supported — forkloop keeps sessions in its own state directory (leave sessionStore out, or read the store yourself).`,
    );
  }
}

async function updateMetadata(
  call: string,
  sessionId: string,
  options: SessionMutationOptions,
  change: (metadata: SessionMetadata) => SessionMetadata,
): Promise<void> {
  refuseSessionStore(call, options);
  const { sessionsDir } = savedSession(stateOf(options), sessionId);
  await writeSessionMetadata(
    sessionsDir,
    sessionId,
    change(await readSessionMetadata(sessionsDir, sessionId)),
  );
}

/** Gives a saved session a title: its `customTitle`, and its `summary` in listings. */
export async function renameSession(
  sessionId: string,
  title: string,
  options: SessionMutationOptions = {},
): Promise<void> {
  if (title.trim() === "")
    throw new OptionsError("renameSession: the title is empty; give the session a title.");
  await updateMetadata("renameSession", sessionId, options, (metadata) => ({
    ...metadata,
    customTitle: title.trim(),
  }));
}

/** Tags a saved session; `null` clears the tag. */
export async function tagSession(
  sessionId: string,
  tag: string | null,
  options: SessionMutationOptions = {},
): Promise<void> {
  await updateMetadata("tagSession", sessionId, options, ({ tag: _old, ...metadata }) =>
    tag === null ? metadata : { ...metadata, tag },
  );
}

/** Marks a session archived: still listed (`archived: true`) and resumable; resuming it unarchives it. */
export async function archiveSession(sessionId: string, options: SessionMutationOptions = {}): Promise<void> {
  await updateMetadata("archiveSession", sessionId, options, (metadata) => ({ ...metadata, archived: true }));
}

/** Clears the archived mark (listings then say `archived: false`, as the Agent SDK's do). */
export async function unarchiveSession(
  sessionId: string,
  options: SessionMutationOptions = {},
): Promise<void> {
  await updateMetadata("unarchiveSession", sessionId, options, (metadata) => ({
    ...metadata,
    archived: false,
  }));
}

/** A query resumed an archived session: it is unarchived, as a prompt sent in it does in Claude Code. */
export async function unarchiveOnResume(sessionsDir: string, sessionId: string): Promise<void> {
  const metadata = await readSessionMetadata(sessionsDir, sessionId);
  if (metadata.archived === true)
    await writeSessionMetadata(sessionsDir, sessionId, { ...metadata, archived: false });
}

/** One saved session's listing entry, or undefined when there is no such session of this project. */
export async function getSessionInfo(
  sessionId: string,
  options: GetSessionInfoOptions = {},
): Promise<SessionInfo | undefined> {
  refuseSessionStore("getSessionInfo", options);
  const summary = (await listSessionsIn(stateOf(options))).find((entry) => entry.sessionId === sessionId);
  return summary === undefined ? undefined : sessionInfoOf(summary);
}

/**
 * Deletes a saved session: its transcript, its metadata and its directory (sub-agents'
 * transcripts, saved MCP results). R-R5: it takes the session's lock first, so a session a query
 * is running (in this process or another) is refused, naming the process that holds it.
 */
export async function deleteSession(sessionId: string, options: SessionMutationOptions = {}): Promise<void> {
  refuseSessionStore("deleteSession", options);
  const { sessionsDir } = savedSession(stateOf(options), sessionId);
  const lock = await lockSession(sessionsDir, sessionId);
  try {
    await rm(join(sessionsDir, sessionId), { recursive: true, force: true });
    await rm(metadataPath(sessionsDir, sessionId), { force: true });
    await rm(sessionTranscriptPath(sessionsDir, sessionId), { force: true });
  } finally {
    await lock.release();
  }
}

/** The ids of a session's sub-agents that left a transcript, in name order. */
export async function listSubagents(
  sessionId: string,
  options: ListSubagentsOptions = {},
): Promise<string[]> {
  refuseSessionStore("listSubagents", options);
  const { sessionsDir } = savedSession(stateOf(options), sessionId);
  let names: string[];
  try {
    names = await readdir(join(sessionsDir, sessionId, "agents"));
  } catch {
    return [];
  }
  return names
    .filter((name) => name.endsWith(TRANSCRIPT_EXTENSION))
    .map((name) => name.slice(0, -TRANSCRIPT_EXTENSION.length))
    .sort();
}

/**
 * A sub-agent's own conversation (its task first), as the Agent SDK's messages; an agent the
 * session has no transcript of gives none, as in the Agent SDK.
 */
export async function getSubagentMessages(
  sessionId: string,
  agentId: string,
  options: GetSubagentMessagesOptions = {},
): Promise<SessionMessage[]> {
  refuseSessionStore("getSubagentMessages", options);
  const { sessionsDir } = savedSession(stateOf(options), sessionId);
  // An agent id names a file: anything but a plain name cannot be one of ours.
  if (!/^[\w-]+$/.test(agentId)) return [];
  const path = subAgentTranscriptPath(sessionsDir, sessionId, agentId);
  if (!existsSync(path)) return [];
  return page(sessionMessagesOf((await loadTranscript(path)).messages, sessionId), options);
}
