import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { checkId } from "./state-dirs.js";

/**
 * What the Agent SDK's session management adds to a saved session — a title, a tag, an archived
 * mark — kept beside its transcript in `<id>.meta.json`, never in the transcript: a running
 * query appends to the transcript, and a second writer there could interleave with it.
 */
export interface SessionMetadata {
  readonly customTitle?: string;
  readonly tag?: string;
  readonly archived?: boolean;
}

export function metadataPath(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, `${checkId("session", sessionId)}.meta.json`);
}

/**
 * A session's metadata. None reads as empty, and so does a damaged file or fields of the wrong
 * type (the file is project state: read as hostile input; the next write replaces it whole).
 */
export async function readSessionMetadata(sessionsDir: string, sessionId: string): Promise<SessionMetadata> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(metadataPath(sessionsDir, sessionId), "utf8"));
  } catch {
    return {};
  }
  if (parsed === null || typeof parsed !== "object") return {};
  const { customTitle, tag, archived } = parsed as Record<string, unknown>;
  return {
    ...(typeof customTitle === "string" ? { customTitle } : {}),
    ...(typeof tag === "string" ? { tag } : {}),
    ...(typeof archived === "boolean" ? { archived } : {}),
  };
}

/** Rewrites a session's metadata whole (a temporary file renamed over it: never half-written). */
export async function writeSessionMetadata(
  sessionsDir: string,
  sessionId: string,
  metadata: SessionMetadata,
): Promise<void> {
  const path = metadataPath(sessionsDir, sessionId);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(metadata)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}
