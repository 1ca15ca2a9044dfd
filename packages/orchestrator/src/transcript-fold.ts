import type { CacheSafeParams, Message, RequestPrefix } from "@forkloop/loop-core";
import { OrchestratorError } from "./errors.js";
import type { TranscriptRecord } from "./transcript.js";

/**
 * R-R12: what a transcript says once its records are read in order — the conversation to resume
 * from, the latest CacheSafeParams, the session's start and end — built record by record, so a
 * reader can stream the file and keep none of the records (the writer folds what it appends the
 * same way, to know which messages a `fork_point` can refer to).
 *
 * Two formats are read: format 1 wrote the whole CacheSafeParams (`cache_safe_params`, the
 * request prefix with every message) after every turn; format 2 writes the cache-key part once
 * per change (`request_prefix`) and a `fork_point` per turn naming how many of the history's
 * messages the prefix holds. Messages are de-duplicated by uuid; a `history` record (after a
 * compaction) replaces everything before it.
 */
export class TranscriptFold {
  readonly #messages = new Map<string, Message>();
  #start: Extract<TranscriptRecord, { type: "session_start" }> | undefined;
  #terminal: Extract<TranscriptRecord, { type: "terminal" }> | undefined;
  #prefix: RequestPrefix | undefined;
  #cacheSafeParams: CacheSafeParams | undefined;
  /** The latest fork point, resolved lazily (the messages are the history's first `count`). */
  #forkPoint:
    | { readonly prefix: RequestPrefix; readonly count: number; readonly lastUuid: string | null }
    | undefined;
  #records = 0;

  constructor(private readonly path: string) {}

  get recordCount(): number {
    return this.#records;
  }

  get start() {
    return this.#start;
  }

  get terminal() {
    return this.#terminal;
  }

  /** The cache-key part of the latest request prefix written (format 2), if any. */
  get prefix(): RequestPrefix | undefined {
    return this.#prefix;
  }

  /** The history as the records so far build it, in order (live: do not keep across `add`). */
  messages(): IterableIterator<Message> {
    return this.#messages.values();
  }

  get messageCount(): number {
    return this.#messages.size;
  }

  add(record: TranscriptRecord): void {
    this.#records++;
    switch (record.type) {
      case "session_start":
        this.#start ??= record;
        break;
      case "message":
        this.#messages.set(record.message.uuid, record.message);
        break;
      case "history":
        // A fork point refers to the history it was written against: resolve it before it goes.
        this.#resolveForkPoint();
        this.#messages.clear();
        for (const message of record.messages) this.#messages.set(message.uuid, message);
        break;
      case "cache_safe_params":
        this.#forkPoint = undefined;
        this.#cacheSafeParams = record.params;
        break;
      case "request_prefix":
        this.#prefix = record.prefix;
        break;
      case "fork_point":
        if (this.#prefix === undefined) break; // a fork point before any prefix names nothing
        this.#forkPoint = { prefix: this.#prefix, count: record.messageCount, lastUuid: record.lastUuid };
        break;
      case "terminal":
        this.#terminal = record;
        break;
      case "sub_agent":
      case "transition":
      case "request":
      case "tool_started":
      case "rate_limited":
        break;
      default:
        throw new OrchestratorError("transcript_corrupt", `unknown record type in ${this.path}`, { record });
    }
  }

  /** The latest CacheSafeParams (R-F3), for post-resume forks. */
  cacheSafeParams(): CacheSafeParams | undefined {
    this.#resolveForkPoint();
    return this.#cacheSafeParams;
  }

  #resolveForkPoint(): void {
    const point = this.#forkPoint;
    if (point === undefined) return;
    this.#forkPoint = undefined;
    const messages = [...this.#messages.values()].slice(0, point.count);
    const last = messages.at(-1)?.uuid ?? null;
    // A history that no longer holds the messages the point named: no prefix rather than a wrong one.
    this.#cacheSafeParams =
      messages.length === point.count && last === point.lastUuid
        ? { ...point.prefix, forkContextMessages: messages }
        : undefined;
  }
}
