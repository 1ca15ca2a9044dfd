import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import type { Message, TerminalReason } from "@forkloop/loop-core";
import { loadIntactTranscript, TRANSCRIPT_EXTENSION, type TranscriptDamageData } from "./transcript.js";

export interface SessionSummary {
  readonly sessionId: string;
  readonly path: string;
  readonly createdAt: string | undefined;
  readonly updatedAt: string;
  readonly model: string | undefined;
  readonly cwd: string | undefined;
  readonly messageCount: number;
  /** Text of the first user message, cut to 200 characters. */
  readonly firstPrompt: string | undefined;
  readonly terminalReason: TerminalReason | undefined;
  readonly torn: boolean;
  /** R-R4: where the transcript is damaged (the summary then covers the intact part). */
  readonly damage?: TranscriptDamageData;
}

function firstUserText(messages: readonly Message[]): string | undefined {
  const first = messages.find((message) => message.type === "user");
  if (!first) return undefined;
  const content = first.message.content;
  const text =
    typeof content === "string"
      ? content
      : content.map((block) => (block.type === "text" ? block.text : "")).join("");
  return text.slice(0, 200);
}

/** Lists the top-level session transcripts in `dir`, newest first. */
export async function listSessions(dir: string): Promise<SessionSummary[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  const summaries = await Promise.all(
    names
      .filter((name) => name.endsWith(TRANSCRIPT_EXTENSION))
      .map(async (name): Promise<SessionSummary> => {
        const path = join(dir, name);
        const [loaded, info] = await Promise.all([loadIntactTranscript(path), stat(path)]);
        return {
          sessionId: loaded.start?.sessionId ?? name.slice(0, -TRANSCRIPT_EXTENSION.length),
          path,
          createdAt: loaded.start?.createdAt,
          updatedAt: info.mtime.toISOString(),
          model: loaded.start?.model,
          cwd: loaded.start?.cwd,
          messageCount: loaded.messages.length,
          firstPrompt: firstUserText(loaded.messages),
          terminalReason: loaded.terminal?.reason,
          torn: loaded.torn,
          ...(loaded.damage === undefined ? {} : { damage: loaded.damage }),
        };
      }),
  );
  return summaries.sort((a, b) => b.updatedAt.localeCompare(a.updatedAt));
}
