import { join } from "node:path";
import type Anthropic from "@anthropic-ai/sdk";
import { loadAnthropicSdk } from "@forkloop/loop-core";
import type { ModelEndpoint } from "@forkloop/orchestrator";
import type { ModelSource } from "@forkloop/sdk";
import { endpointUrl } from "@forkloop/sdk/internal";
import { BatchError } from "./batch-error.js";
import {
  MESSAGE_BATCHES_LOG,
  type MessageBatchJournal,
  openMessageBatchJournal,
} from "./message-batch-journal.js";
import { type MessageBatchesClient, MessageBatchRounds, type RoundEvent } from "./message-batch-rounds.js";
import { formatDuration } from "./progress-display.js";

/**
 * R-B8: `forkloop batch --api batches` — the Message Batches rounds for one run of a batch: the
 * journal of its batches (`message-batches.log` in the batch's directory, so a resume polls what
 * a killed run sent) and the rounds over the official SDK's `messages.batches`.
 */
export interface BatchApiRun {
  readonly rounds: MessageBatchRounds;
  close(): Promise<void>;
}

/** A round's batch is polled every `FORKLOOP_BATCH_POLL_MS` (default 30 s). */
const DEFAULT_POLL_MS = 30_000;
/** A round waits at most `FORKLOOP_BATCH_ROUND_WAIT_MS` for items still running tools (default 10 s). */
const DEFAULT_ROUND_WAIT_MS = 10_000;
/** A processing batch is reported every `FORKLOOP_BATCH_PROGRESS_MS` (default 60 s). */
const DEFAULT_PROGRESS_MS = 60_000;

export async function openBatchApi(
  source: ModelSource,
  dir: string,
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
): Promise<BatchApiRun> {
  const client = await batchesClient(source.endpoint);
  await checkBatchesApi(client, endpointUrl(source));
  const journal: MessageBatchJournal = await openMessageBatchJournal(join(dir, MESSAGE_BATCHES_LOG));
  const open = journal.sent.filter((batch) => !journal.ended.has(batch.batchId));
  if (open.length > 0) {
    log(
      `message batches: ${open.length} sent by an earlier run and not yet read (${open.map((b) => b.batchId).join(", ")}): polled, not sent again`,
    );
  }
  const rounds = new MessageBatchRounds({
    client: adapt(client),
    journal,
    pollMs: msFromEnv(env.FORKLOOP_BATCH_POLL_MS, "FORKLOOP_BATCH_POLL_MS", DEFAULT_POLL_MS),
    roundWaitMs: msFromEnv(
      env.FORKLOOP_BATCH_ROUND_WAIT_MS,
      "FORKLOOP_BATCH_ROUND_WAIT_MS",
      DEFAULT_ROUND_WAIT_MS,
    ),
    progressEveryMs: msFromEnv(
      env.FORKLOOP_BATCH_PROGRESS_MS,
      "FORKLOOP_BATCH_PROGRESS_MS",
      DEFAULT_PROGRESS_MS,
    ),
    modelOverrides: source.modelOverrides,
    onEvent: (event) => log(describeRoundEvent(event)),
  });
  return {
    rounds,
    async close() {
      rounds.close();
      await journal.close();
    },
  };
}

/**
 * Each item's model request waits for its round's batch to end (minutes, up to the API's 24
 * hours), so the response deadlines that catch a silent server online would abort every round:
 * they are raised past the batch's expiry (24 h) for this run.
 */
export function batchApiEndpoint(endpoint: ModelEndpoint): ModelEndpoint {
  const day = 25 * 60 * 60 * 1000;
  return { ...endpoint, retry: { ...endpoint.retry, headersTimeoutMs: day, attemptTimeoutMs: day } };
}

/** The SDK's `messages.batches`, typed as the rounds take it (params are the loop's own bodies). */
function adapt(client: Anthropic): MessageBatchesClient {
  const batches = client.messages.batches;
  return {
    create: (body, options) =>
      batches.create(body as unknown as Anthropic.Messages.BatchCreateParams, options),
    retrieve: (id) => batches.retrieve(id),
    results: (id) => batches.results(id),
    cancel: (id) => batches.cancel(id),
    list: (query) => batches.list(query),
  };
}

/** The SDK loads only when a batch uses the Batches API (R-V2: nothing is loaded before its use). */
async function batchesClient(endpoint: ModelEndpoint): Promise<Anthropic> {
  const Sdk = await loadAnthropicSdk();
  return new Sdk({
    apiKey: endpoint.apiKey,
    ...(endpoint.baseURL === undefined ? {} : { baseURL: endpoint.baseURL }),
    maxRetries: endpoint.maxRetries ?? 2,
  });
}

/** Exit 2 before anything is sent when the endpoint has no Message Batches API. */
async function checkBatchesApi(client: Anthropic, url: string): Promise<void> {
  try {
    const page = await client.messages.batches.list({ limit: 1 });
    if (!Array.isArray(page.data)) throw new Error("the answer was not a list of batches");
  } catch (error) {
    const status = (error as { status?: number }).status;
    if (status === 401 || status === 403) return; // the key's problem: the first round says it (R-R9)
    throw new BatchError(
      "batches_api_unavailable",
      `--api batches: ${url} has no Message Batches API (GET /v1/messages/batches: ${status === undefined ? (error as Error).message : `HTTP ${status}`}). Point ANTHROPIC_BASE_URL at an endpoint that has it (https://api.anthropic.com, or forkloop sim), or drop --api batches to send each request online.`,
    );
  }
}

/** A whole number of milliseconds from an environment variable; refused (naming it) otherwise. */
export function msFromEnv(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === "") return fallback;
  if (!/^\d+$/.test(value))
    throw new BatchError(
      "invalid_batch",
      `${name} must be a whole number of milliseconds (got "${value}"), e.g. ${name}=${fallback}`,
    );
  return Number(value);
}

/** One progress line per round event (the display's log). */
function describeRoundEvent(event: RoundEvent): string {
  switch (event.type) {
    case "round_sent":
      return `round ${event.round}: message batch ${event.batchId} sent (${event.entries} ${event.entries === 1 ? "entry" : "entries"}), processing`;
    case "round_resumed":
      return `message batch ${event.batchId} (sent by an earlier run): polled for its answers, not sent again`;
    case "round_ended": {
      const counts = Object.entries(event.counts)
        .filter(([, n]) => n > 0)
        .map(([kind, n]) => `${n} ${kind}`)
        .join(", ");
      return `message batch ${event.batchId} ended: ${counts || "no entries"}`;
    }
    case "round_unconfirmed":
      return event.batchId === undefined
        ? `round ${event.round} (${event.entries} entries) was being sent when an earlier run stopped; the endpoint has no batch of it: sent again`
        : `round ${event.round} (${event.entries} entries) was being sent when an earlier run stopped: message batch ${event.batchId} is taken for it and polled, not sent again`;
    case "round_split":
      return `a round of ${event.entries} entries was too large for one message batch (${event.reason}): sent as two`;
    case "round_waiting": {
      // The API says most batches end within an hour; they expire 24 h after creation.
      const eta =
        event.etaMs === undefined
          ? "most batches end within an hour"
          : event.etaMs === 0
            ? "longer than this run's earlier rounds took: any moment now"
            : `about ${formatDuration(event.etaMs)} left, as this run's earlier rounds took`;
      const expires = event.expiresAt === undefined ? "" : `; it expires at ${event.expiresAt}`;
      return `message batch ${event.batchId} (${event.entries} ${event.entries === 1 ? "entry" : "entries"}): processing for ${formatDuration(event.elapsedMs)}, ${eta}${expires}`;
    }
  }
}
