import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import {
  listSessions as listTranscripts,
  loadTranscript,
  type SessionSummary,
  sessionTranscriptPath,
  TranscriptWriter,
} from "@forkloop/orchestrator";
import type { SDKAssistantMessage, SDKUserMessage } from "./messages.js";
import { OptionsError } from "./options-error.js";
import { checkId, sessionsDir } from "./state-dirs.js";

/** A new session id: `s-<date>-<time>-<random>`, sortable by creation time. */
export function newSessionId(): string {
  return `s-${new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${randomBytes(3).toString("hex")}`;
}

/** A saved session, with the Agent SDK's `SDKSessionInfo` fields (`summary`, `lastModified`). */
export type SessionInfo = SessionSummary & {
  /** The first prompt (200 characters at most), or "" for a session without one. */
  readonly summary: string;
  /** Epoch ms of the transcript's last write. */
  readonly lastModified: number;
};

/** The saved sessions of a project, newest first (forkloop keeps them in `<cwd>/.forkloop/sessions`). */
export async function listSessions(
  options: { dir?: string; limit?: number; offset?: number } = {},
): Promise<SessionInfo[]> {
  const summaries = await listTranscripts(sessionsDir(resolve(options.dir ?? process.cwd())));
  const offset = options.offset ?? 0;
  return summaries
    .map((summary) => ({
      ...summary,
      summary: summary.firstPrompt ?? "",
      lastModified: Date.parse(summary.updatedAt),
    }))
    .sort((a, b) => b.lastModified - a.lastModified)
    .slice(offset, options.limit === undefined ? undefined : offset + options.limit);
}

/** The path of a saved session's transcript; an unknown or malformed id is an OptionsError. */
export function savedSessionPath(cwd: string, sessionId: string): string {
  const path = sessionTranscriptPath(sessionsDir(cwd), checkId("session", sessionId));
  if (!existsSync(path)) {
    throw new OptionsError(
      `no saved session "${sessionId}" in ${sessionsDir(cwd)}. List them with listSessions() or \`forkloop sessions list\`.`,
    );
  }
  return path;
}

/**
 * A saved session's conversation as the Agent SDK's messages (user and assistant, in order;
 * compaction boundaries and notices left out). After a compaction it starts at the summary.
 */
export async function getSessionMessages(
  sessionId: string,
  options: { dir?: string } = {},
): Promise<(SDKUserMessage | SDKAssistantMessage)[]> {
  const loaded = await loadTranscript(savedSessionPath(resolve(options.dir ?? process.cwd()), sessionId));
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
  options: { dir?: string; upToMessageId?: string } = {},
): Promise<{ sessionId: string }> {
  const cwd = resolve(options.dir ?? process.cwd());
  const loaded = await loadTranscript(savedSessionPath(cwd, sessionId));
  let messages = loaded.messages;
  if (options.upToMessageId !== undefined) {
    const index = messages.findIndex((message) => message.uuid === options.upToMessageId);
    if (index < 0) throw new OptionsError(`session "${sessionId}" has no message ${options.upToMessageId}.`);
    messages = messages.slice(0, index + 1);
  }
  const forkedId = newSessionId();
  const writer = new TranscriptWriter(sessionTranscriptPath(sessionsDir(cwd), forkedId));
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
    if (loaded.cacheSafeParams !== undefined && options.upToMessageId === undefined) {
      writer.append({ type: "cache_safe_params", params: loaded.cacheSafeParams });
    }
  } finally {
    writer.close();
  }
  return { sessionId: forkedId };
}
