import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SUMMARY_SECTIONS } from "./summary.js";

/** Durable notes of one session (R-C5) and how far into the history they reach. */
export interface SessionNotes {
  readonly text: string;
  /** uuid of the newest message the notes account for. */
  readonly coveredUuid: string;
  /** Token count of the history when the notes were written (update interval bookkeeping). */
  readonly tokensAtUpdate: number;
}

/** Where notes live; one store per session. I/O only, no decisions. */
export interface SessionMemoryStore {
  load(): Promise<SessionNotes | null>;
  save(notes: SessionNotes): Promise<void>;
}

const HEADER = /^<!-- forkloop-session-memory (\{.*\}) -->\n/;

/** A Markdown notes file `<dir>/<sessionId>.md` with a one-line metadata header. */
export function createFileSessionMemoryStore(options: {
  readonly dir: string;
  readonly sessionId: string;
}): SessionMemoryStore {
  if (!/^[\w.-]+$/.test(options.sessionId) || options.sessionId.startsWith(".")) {
    throw new Error(`session id "${options.sessionId}" is not a safe file name`);
  }
  const path = join(options.dir, `${options.sessionId}.md`);
  return {
    async load() {
      let raw: string;
      try {
        raw = await readFile(path, "utf8");
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw error;
      }
      const header = HEADER.exec(raw);
      if (!header?.[1]) return null;
      const meta = JSON.parse(header[1]) as { coveredUuid?: unknown; tokensAtUpdate?: unknown };
      if (typeof meta.coveredUuid !== "string" || typeof meta.tokensAtUpdate !== "number") return null;
      return {
        text: raw.slice(header[0].length),
        coveredUuid: meta.coveredUuid,
        tokensAtUpdate: meta.tokensAtUpdate,
      };
    },
    async save(notes) {
      await mkdir(options.dir, { recursive: true });
      const meta = JSON.stringify({ coveredUuid: notes.coveredUuid, tokensAtUpdate: notes.tokensAtUpdate });
      // Write-then-rename: a crash mid-write never leaves half a notes file behind.
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, `<!-- forkloop-session-memory ${meta} -->\n${notes.text}`);
      await rename(temporary, path);
    },
  };
}

/** An in-memory store (tests, short-lived sub-agents). */
export function createMemorySessionMemoryStore(initial: SessionNotes | null = null): SessionMemoryStore {
  let notes = initial;
  return {
    load: async () => notes,
    save: async (next) => {
      notes = next;
    },
  };
}

/** The instruction of the session-memory request: the same prefix as the parent, then this. */
export function buildSessionMemoryInstruction(previous: string | null): string {
  const sections = SUMMARY_SECTIONS.map((title) => `## ${title}`).join("\n");
  const base = previous
    ? `Here are your current session notes:\n<notes>\n${previous}\n</notes>\n\nUpdate them with what happened since.`
    : "Write session notes for the conversation so far.";
  return `${base} Do not call any tools and do not continue the task. The notes must let someone resume the work without the conversation: keep exact file paths, identifiers, commands, errors and facts the user asked to remember. Reply with the notes inside <summary></summary> tags, using these sections:\n${sections}`;
}

/** R-C5 pure rule: update the notes once the history grew by `intervalTokens` since the last update. */
export function shouldUpdateSessionMemory(input: {
  readonly tokens: number;
  readonly notes: SessionNotes | null;
  readonly minTokens: number;
  readonly intervalTokens: number;
}): boolean {
  if (input.tokens < input.minTokens) return false;
  const since = input.tokens - (input.notes?.tokensAtUpdate ?? 0);
  return since >= input.intervalTokens;
}
