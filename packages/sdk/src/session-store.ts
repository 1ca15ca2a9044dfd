import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { loadTranscript, type TranscriptRecord } from "@forkloop/orchestrator";
import { savedSession, stateOf } from "./session-helpers.js";
import { projectKey } from "./state-dirs.js";

/**
 * The Agent SDK's session store types (`@alpha` there): a store that keeps copies of session
 * transcripts elsewhere (a database, a bucket). forkloop can fill one from its saved sessions
 * (`importSessionToStore`) and ships the in-memory store; a query does not mirror into one
 * (the `sessionStore` query option is refused, naming it).
 */
export interface SessionKey {
  projectKey: string;
  sessionId: string;
  /** Absent for the main transcript; `agents/<agentId>` for a sub-agent's. */
  subpath?: string;
}

/** One transcript record as a store sees it: JSON with a string `type`, most with a `uuid`. */
export interface SessionStoreEntry {
  type: string;
  uuid?: string;
  timestamp?: string;
  [key: string]: unknown;
}

/** A session's running summary, kept by a store from what it is given (`foldSessionSummary`). */
export interface SessionSummaryEntry {
  sessionId: string;
  /** The store's own write time (epoch ms), never an entry's. */
  mtime: number;
  /** The fold's state: persist it as it is. */
  data: Record<string, unknown>;
}

export interface SessionStore {
  append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void>;
  load(key: SessionKey): Promise<SessionStoreEntry[] | null>;
  listSessions?(projectKey: string): Promise<{ sessionId: string; mtime: number }[]>;
  listSessionSummaries?(projectKey: string): Promise<SessionSummaryEntry[]>;
  delete?(key: SessionKey): Promise<void>;
  listSubkeys?(key: { projectKey: string; sessionId: string }): Promise<string[]>;
}

export type SessionStoreFlush = "batched" | "eager";

/** Fields a summary keeps from the first entry that has them, and those the latest entry wins. */
const SET_ONCE = ["isSidechain", "createdAt", "cwd", "firstPrompt"] as const;
const LAST_WINS = ["customTitle", "aiTitle", "lastPrompt", "summaryHint", "gitBranch", "tag"] as const;

/** What an entry says about its session, in the summary's words. */
function factsOf(entry: SessionStoreEntry): Record<string, unknown> {
  const facts: Record<string, unknown> = {};
  for (const field of [...SET_ONCE, ...LAST_WINS]) if (field in entry) facts[field] = entry[field];
  if (entry.type === "session_start") {
    facts.createdAt ??= entry.createdAt;
    facts.cwd ??= entry.cwd;
    facts.isSidechain ??= entry.parent !== undefined;
  }
  const message = (entry.type === "message" ? entry.message : undefined) as
    | { type?: string; isMeta?: boolean; message?: { content?: unknown } }
    | undefined;
  if (message?.type === "user" && message.isMeta !== true) {
    const text = promptText(message.message?.content);
    if (text !== "") {
      facts.firstPrompt ??= text;
      facts.lastPrompt = text;
    }
  }
  return facts;
}

function promptText(content: unknown): string {
  if (typeof content === "string") return content.slice(0, 200);
  if (!Array.isArray(content)) return "";
  const texts = content.flatMap((block: { type?: string; text?: unknown }) =>
    block.type === "text" && typeof block.text === "string" ? [block.text] : [],
  );
  return texts.join("\n").slice(0, 200);
}

/**
 * Folds newly appended entries into a session's summary (a pure function; the store serialises
 * its own writes): set-once fields keep their first value, the others their latest. `mtime` is
 * the store's write time; without it the previous one stays.
 */
export function foldSessionSummary(
  prev: SessionSummaryEntry | undefined,
  key: SessionKey,
  entries: SessionStoreEntry[],
  options: { mtime?: number } = {},
): SessionSummaryEntry {
  const data: Record<string, unknown> = { ...prev?.data };
  for (const entry of entries) {
    const facts = factsOf(entry);
    for (const field of SET_ONCE) if (facts[field] !== undefined) data[field] ??= facts[field];
    for (const field of LAST_WINS) if (facts[field] !== undefined) data[field] = facts[field];
  }
  return { sessionId: key.sessionId, mtime: options.mtime ?? prev?.mtime ?? 0, data };
}

/** A session store in this process's memory, for tests and development (lost when it exits). */
export class InMemorySessionStore implements SessionStore {
  readonly #entries = new Map<string, { key: SessionKey; entries: SessionStoreEntry[]; mtime: number }>();
  readonly #summaries = new Map<string, SessionSummaryEntry>();
  #lastMtime = 0;

  #id(key: SessionKey): string {
    return JSON.stringify([key.projectKey, key.sessionId, key.subpath ?? null]);
  }

  /** A write time later than every earlier one, so listings order by it even within one ms. */
  #now(): number {
    this.#lastMtime = Math.max(Date.now(), this.#lastMtime + 1);
    return this.#lastMtime;
  }

  async append(key: SessionKey, entries: SessionStoreEntry[]): Promise<void> {
    const id = this.#id(key);
    const mtime = this.#now();
    const copies = entries.map((entry) => structuredClone(entry));
    const stored = this.#entries.get(id);
    if (stored === undefined) this.#entries.set(id, { key: { ...key }, entries: copies, mtime });
    else {
      stored.entries.push(...copies);
      stored.mtime = mtime;
    }
    if (key.subpath === undefined) {
      this.#summaries.set(id, foldSessionSummary(this.#summaries.get(id), key, copies, { mtime }));
    }
  }

  async load(key: SessionKey): Promise<SessionStoreEntry[] | null> {
    const stored = this.#entries.get(this.#id(key));
    return stored === undefined ? null : stored.entries.map((entry) => structuredClone(entry));
  }

  async listSessions(projectKey: string): Promise<{ sessionId: string; mtime: number }[]> {
    return this.#mains(projectKey).map(({ key, mtime }) => ({ sessionId: key.sessionId, mtime }));
  }

  async listSessionSummaries(projectKey: string): Promise<SessionSummaryEntry[]> {
    return this.#mains(projectKey).flatMap(({ key }) => {
      const summary = this.#summaries.get(this.#id(key));
      return summary === undefined ? [] : [structuredClone(summary)];
    });
  }

  /** Deletes a transcript; the main transcript's key takes its sub-agents' with it. */
  async delete(key: SessionKey): Promise<void> {
    for (const [id, stored] of this.#entries) {
      const same = stored.key.projectKey === key.projectKey && stored.key.sessionId === key.sessionId;
      if (same && (key.subpath === undefined || stored.key.subpath === key.subpath)) {
        this.#entries.delete(id);
        this.#summaries.delete(id);
      }
    }
  }

  async listSubkeys(key: { projectKey: string; sessionId: string }): Promise<string[]> {
    return [...this.#entries.values()].flatMap((stored) =>
      stored.key.projectKey === key.projectKey &&
      stored.key.sessionId === key.sessionId &&
      stored.key.subpath !== undefined
        ? [stored.key.subpath]
        : [],
    );
  }

  /** Every entry stored under `key` (a test's view). */
  getEntries(key: SessionKey): SessionStoreEntry[] {
    return (this.#entries.get(this.#id(key))?.entries ?? []).map((entry) => structuredClone(entry));
  }

  /** Main transcripts stored. */
  get size(): number {
    return [...this.#entries.values()].filter((stored) => stored.key.subpath === undefined).length;
  }

  clear(): void {
    this.#entries.clear();
    this.#summaries.clear();
  }

  #mains(projectKey: string) {
    return [...this.#entries.values()].filter(
      (stored) => stored.key.projectKey === projectKey && stored.key.subpath === undefined,
    );
  }
}

export interface ImportSessionToStoreOptions {
  dir?: string;
  /** forkloop: where the project's sessions are kept (the `stateDir` query option). */
  stateDir?: string;
  /** Its sub-agents' transcripts too (`agents/<agentId>`); default true. */
  includeSubagents?: boolean;
  /** Entries per `append()`; default 500. */
  batchSize?: number;
}

/** A transcript record as a store entry: messages carry their uuid and time at the top. */
function entryOf(record: TranscriptRecord): SessionStoreEntry {
  if (record.type !== "message") return { ...record } as SessionStoreEntry;
  const message = record.message as { uuid: string; timestamp?: string };
  return {
    type: "message",
    uuid: message.uuid,
    ...(typeof message.timestamp === "string" ? { timestamp: message.timestamp } : {}),
    message: record.message,
  };
}

async function appendInBatches(
  store: SessionStore,
  key: SessionKey,
  entries: SessionStoreEntry[],
  batchSize: number,
): Promise<void> {
  for (let start = 0; start < entries.length; start += batchSize) {
    await store.append(key, entries.slice(start, start + batchSize));
  }
}

/**
 * Copies a saved session (and by default its sub-agents' transcripts) into a store, under the
 * project's key; messages carry their `uuid`, so a store that ignores duplicates can take a
 * second import safely.
 */
export async function importSessionToStore(
  sessionId: string,
  store: SessionStore,
  options: ImportSessionToStoreOptions = {},
): Promise<void> {
  const state = stateOf(options);
  const { path, sessionsDir } = savedSession(state, sessionId);
  const batchSize = Math.max(1, options.batchSize ?? 500);
  const key: SessionKey = { projectKey: projectKey(state.projectRoot), sessionId };
  await appendInBatches(store, key, (await loadTranscript(path)).records.map(entryOf), batchSize);
  if (options.includeSubagents === false) return;
  const agentsDir = join(sessionsDir, sessionId, "agents");
  const names = await readdir(agentsDir).catch(() => [] as string[]);
  for (const name of names.filter((file) => file.endsWith(".fltr")).sort()) {
    const records = (await loadTranscript(join(agentsDir, name))).records;
    await appendInBatches(
      store,
      { ...key, subpath: `agents/${name.slice(0, -".fltr".length)}` },
      records.map(entryOf),
      batchSize,
    );
  }
}
