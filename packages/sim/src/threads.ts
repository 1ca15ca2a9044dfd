import { type ApiError, apiError, invalidRequest } from "./api-error.js";

/**
 * Message threads (R-D2; https://platform.claude.com/docs/en/build-with-claude/message-threads,
 * beta `message-threads-2026-08-12`), implemented rather than refused: today's clients (the
 * SDK's tool runner, Claude Code) create a thread on the first request and then send only the
 * new messages, and they fall back to full conversations only after a `thread_unsupported_request`
 * refusal — one refused request per session and model. The simulator keeps each thread's
 * conversation (with its reply) under the response id, as the API does:
 * - `thread: {type: "create"}`: the request as usual; its system, tools and messages plus the
 *   reply are stored under the response `id`.
 * - `thread: {type: "continue", previous_message_id}`: only the new messages, no `system` or
 *   `tools`; the stored conversation is rebuilt in front of them before anything is validated,
 *   counted or cached, so caching works as on a full request.
 * - A thread expires 5 minutes after its last request: continuing an expired or unknown one is a
 *   404 with `error_code: "thread_not_found"` (the SDK's typed ThreadNotFoundError extends its
 *   NotFoundError; its doc: "No usable Thread state was found for `previous_message_id`. Replay the
 *   full conversation with `thread: {"type": "create"}`"), and the client replays in full. The
 *   message's wording is UNCONFIRMED (the SDK documents the meaning, not the sentence).
 * - More than 3 `cache_control` blocks with a thread: the 400 clients have reported, with
 *   `error_code: "thread_unsupported_request"` (the fourth slot is the server's).
 */
const THREADS_BETA = "message-threads-2026-08-12";
const THREAD_TTL_MS = 5 * 60 * 1000;
const MAX_MARKERS_WITH_THREAD = 3;

type Json = Record<string, unknown>;

/** What a thread keeps: the create request's system and tools, and the conversation so far. */
export interface ThreadState {
  readonly fields: Json;
  readonly messages: readonly unknown[];
}

interface Stored extends ThreadState {
  apiKey: string;
  lastUsed: number;
}

export type ThreadExpansion =
  | { ok: true; body: unknown; thread: ThreadState | null }
  | { ok: false; error: ApiError };

export class ThreadStore {
  readonly #byMessage = new Map<string, Stored>();

  /** The full request a thread request stands for (the body as sent when it has no thread). */
  expand(json: unknown, apiKey: string, betas: readonly string[], now: number): ThreadExpansion {
    if (!isObject(json) || !("thread" in json)) return { ok: true, body: json, thread: null };
    if (!betas.includes(THREADS_BETA)) return fail("thread: Extra inputs are not permitted");
    const { thread, ...rest } = json;
    if (!isObject(thread)) return fail("thread: Input should be an object");
    const markers = countMarkers(rest);
    if (markers > MAX_MARKERS_WITH_THREAD) {
      return {
        ok: false,
        error: invalidRequest(
          `thread: a maximum of ${MAX_MARKERS_WITH_THREAD} blocks with cache_control may be provided when thread is set -- the fourth marker slot is reserved for the marker the server places on the conversation last cache-eligible block. Found ${markers}.`,
          "thread_unsupported_request",
        ),
      };
    }
    const messages = Array.isArray(rest.messages) ? rest.messages : [];
    if (thread.type === "create") {
      return { ok: true, body: rest, thread: { fields: pick(rest), messages } };
    }
    if (thread.type !== "continue") {
      return fail(
        `thread: Input tag '${String(thread.type)}' found using 'type' does not match any of the expected tags: 'create', 'continue'`,
      );
    }
    const previous = thread.previous_message_id;
    if (typeof previous !== "string") return fail("thread.continue.previous_message_id: Field required");
    if ("system" in rest || "tools" in rest) {
      return fail(
        "thread: leave system and tools out of a continue request; the thread keeps the values from its create request",
      );
    }
    const stored = this.#byMessage.get(previous);
    if (!stored || stored.apiKey !== apiKey || now - stored.lastUsed > THREAD_TTL_MS) {
      return {
        ok: false,
        error: {
          ...apiError(
            404,
            `thread: no thread state was found for previous_message_id ${previous}; resend the full conversation`,
          ),
          errorCode: "thread_not_found",
        },
      };
    }
    stored.lastUsed = now;
    const full = [...stored.messages, ...messages];
    return {
      ok: true,
      body: { ...rest, ...stored.fields, messages: full },
      thread: { fields: stored.fields, messages: full },
    };
  }

  /** Stores the conversation with its reply under the response id (5 minutes from now). */
  remember(
    messageId: string,
    apiKey: string,
    thread: ThreadState,
    reply: readonly unknown[],
    now: number,
  ): void {
    if (this.#byMessage.size > 10_000) {
      for (const [id, stored] of this.#byMessage)
        if (now - stored.lastUsed > THREAD_TTL_MS) this.#byMessage.delete(id);
    }
    this.#byMessage.set(messageId, {
      apiKey,
      fields: thread.fields,
      messages: [...thread.messages, { role: "assistant", content: reply }],
      lastUsed: now,
    });
  }
}

function fail(message: string): ThreadExpansion {
  return { ok: false, error: invalidRequest(message) };
}

function isObject(value: unknown): value is Json {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The fields a thread keeps from its create request. */
function pick(body: Json): Json {
  const kept: Json = {};
  if (body.system !== undefined) kept.system = body.system;
  if (body.tools !== undefined) kept.tools = body.tools;
  return kept;
}

/** Explicit `cache_control` markers on blocks (the top-level one is the automatic slot). */
function countMarkers(body: Json): number {
  let count = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) visit(item);
    else if (isObject(value)) {
      if (isObject(value.cache_control)) count++;
      for (const [key, child] of Object.entries(value)) if (key !== "cache_control") visit(child);
    }
  };
  visit(body.system);
  visit(body.tools);
  visit(body.messages);
  return count;
}
