import { createHash } from "node:crypto";
import { SimError } from "./sim-error.js";

/**
 * A fault the simulator can inject (R-R1–R-R3, R-R9, R-R11: what a broken network, a broken proxy
 * or a prompt-injected model can do to a client):
 * - an HTTP status 400–599 (e.g. "429" with retry-after, "529" overloaded, "500" api_error);
 * - "prompt_too_long": the API's refusal of a prompt over the model's window (a 400
 *   invalid_request_error "prompt is too long: N tokens > M maximum", api doc §4), without
 *   building one;
 * - "mid_stream_error": the stream sends `event: error` (overloaded_error) after some content;
 * - "drop": the connection is destroyed — when streaming, after `afterEvents` SSE events have reached
 *   the client (default: half of the reply), so the client sees a stream that started and then
 *   broke (undici's `TypeError: terminated`, which R-R1 retries); a non-streaming request is cut
 *   before any byte;
 * - "max_tokens": the reply is cut to about half its tokens, stop_reason "max_tokens";
 * - "slow": the stream is paced slowly (`slowMs` per event, default 25);
 * - the stalls only a client's deadline ends (stalled-reply.ts): "silence" (no response at all,
 *   not even headers), "headers_then_silence" (200 and SSE headers, then nothing), "ping_only"
 *   (`ping` events every `slowMs`, forever), "drip" (a text reply whose deltas never stop, one every
 *   `slowMs`: inside any idle timeout, so only an overall deadline per attempt ends it);
 * - bodies that are no reply (garbled-reply.ts): "malformed_sse" (lines that are no SSE, then an
 *   event whose data is not JSON), "truncated_json" (a `message_start` whose JSON is cut off, then
 *   the end), "html_200" (a 200 with an HTML page: a captive portal or a misrouted proxy);
 * - replies a hostile model could send (hostile-reply.ts): "duplicate_ids" (the reply's tool call
 *   twice under one id, plus once under the id of the history's last tool_use), "deep_input" (the
 *   tool call's input nested `depth` levels deep, default 5,000), "unknown_stop_reason" (a
 *   stop_reason no API version has), "huge_block" (one text block of `bytes`, default 5 MB, in
 *   64 KiB deltas), "off_schema" (the brain's text as is, whatever `output_config.format` asks:
 *   an endpoint that does not honour structured outputs).
 */
export type FaultKind =
  | `${number}`
  | "prompt_too_long"
  | "mid_stream_error"
  | "drop"
  | "max_tokens"
  | "slow"
  | "silence"
  | "headers_then_silence"
  | "ping_only"
  | "drip"
  | "malformed_sse"
  | "truncated_json"
  | "html_200"
  | "duplicate_ids"
  | "deep_input"
  | "unknown_stop_reason"
  | "huge_block"
  | "off_schema";

export interface ScheduledFault {
  kind: FaultKind;
  /** 1-based index of the `POST /v1/messages` request, inclusive. */
  from: number;
  /** Inclusive; `Infinity` for "from `from` on". */
  to: number;
  /** For status faults: the `retry-after` header in seconds (429 defaults to 1). */
  retryAfterSeconds?: number;
  /** For "slow": delay per stream event. */
  slowMs?: number;
  /** For "drop": SSE events sent before the cut (at least 1; default half of the reply). */
  afterEvents?: number;
  /** For "deep_input": how deep the tool input is nested (default 5,000). */
  depth?: number;
  /** For "huge_block": the text block's size in bytes (default 5 MB). */
  bytes?: number;
}

/** A fault with its parameters, as a brain's reply may ask for it (`BrainReply.fault`). */
export type FaultRequest = { kind: FaultKind } & FaultOptions;
type FaultOptions = Pick<ScheduledFault, "retryAfterSeconds" | "slowMs" | "afterEvents" | "depth" | "bytes">;

export interface RandomFaults {
  seed: number;
  /** Probability per request of each fault; they are tried in order, at most one fires. */
  probabilities: Partial<Record<FaultKind, number>>;
  retryAfterSeconds?: number;
  slowMs?: number;
  afterEvents?: number;
  depth?: number;
  bytes?: number;
}

export interface FaultSpec {
  schedule?: readonly ScheduledFault[];
  random?: RandomFaults;
}

/** The fault chosen for one request, with its parameters. */
export interface FaultDecision {
  kind: FaultKind;
  retryAfterSeconds: number | null;
  slowMs: number;
  /** For "drop": events sent before the cut; null = half of the reply. */
  afterEvents: number | null;
  depth: number;
  bytes: number;
}

const DEFAULT_SLOW_MS = 25;
const DEFAULT_429_RETRY_AFTER = 1;
const DEFAULT_DEPTH = 5_000;
const DEFAULT_BYTES = 5 * 1024 * 1024;
/** The fault kinds that are not an HTTP status (scenario files accept the same names). */
export const NAMED_FAULTS = [
  "prompt_too_long",
  "mid_stream_error",
  "drop",
  "max_tokens",
  "slow",
  "silence",
  "headers_then_silence",
  "ping_only",
  "drip",
  "malformed_sse",
  "truncated_json",
  "html_200",
  "duplicate_ids",
  "deep_input",
  "unknown_stop_reason",
  "huge_block",
  "off_schema",
] as const;
const NAMED: readonly string[] = NAMED_FAULTS;

/** Picks the fault for the n-th (1-based) messages request: the schedule first, then the dice. */
export function pickFault(spec: FaultSpec | undefined, requestIndex: number): FaultDecision | null {
  if (!spec) return null;
  for (const f of spec.schedule ?? []) {
    if (requestIndex >= f.from && requestIndex <= f.to) {
      return decision(f.kind, f);
    }
  }
  const random = spec.random;
  if (!random) return null;
  const roll = uniform(random.seed, requestIndex);
  let acc = 0;
  for (const [kind, p] of Object.entries(random.probabilities)) {
    acc += p ?? 0;
    if (roll < acc) return decision(kind as FaultKind, random);
  }
  return null;
}

/**
 * The decision for a fault asked for by kind (a scenario rule's `fault`) or with its parameters
 * (a brain's), with defaults.
 */
export function faultOfKind(fault: FaultKind | FaultRequest): FaultDecision {
  return typeof fault === "string" ? decision(fault, {}) : decision(fault.kind, fault);
}

function decision(kind: FaultKind, options: FaultOptions): FaultDecision {
  return {
    kind,
    retryAfterSeconds: options.retryAfterSeconds ?? (kind === "429" ? DEFAULT_429_RETRY_AFTER : null),
    slowMs: options.slowMs ?? DEFAULT_SLOW_MS,
    afterEvents: options.afterEvents ?? null,
    depth: options.depth ?? DEFAULT_DEPTH,
    bytes: options.bytes ?? DEFAULT_BYTES,
  };
}

/** A deterministic number in [0, 1) from the seed and the request index. */
function uniform(seed: number, index: number): number {
  const digest = createHash("sha256").update(`${seed}:${index}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** The name a request record carries for a fault. */
export function faultRecordName(kind: FaultKind): string {
  return kind === "max_tokens" ? "max_tokens_cut" : kind;
}

/** A `--faults` text the simulator cannot follow: the message names the item and the fix. */
export class FaultSpecError extends SimError {
  override readonly name = "FaultSpecError";
  constructor(message: string) {
    super("invalid_fault_spec", message);
  }
}

/**
 * Parses the CLI's `--faults` text. Two forms, joined by `;` when both are wanted:
 * - a schedule: `KIND@RANGE[:key=value…]` items separated by commas, RANGE = `N`, `N-M` or `N+`,
 *   keys `retry_after` (seconds), `slow_ms` (slow, ping_only, drip), `after_events` (drop),
 *   `depth` (deep_input) and `bytes` (huge_block):
 *   `429@1,529@2-3,mid_stream_error@4,drop@5:after_events=3,max_tokens@6,slow@7:slow_ms=50,429@8:retry_after=0.2`
 * - seeded random: `random:seed=7,p429=0.1,p529=0.05[,p500=…,pmid_stream_error=…,pdrop=…,
 *   pmax_tokens=…,pslow=…,pKIND=…,retry_after=…,slow_ms=…,after_events=…,depth=…,bytes=…]`.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const schedule: ScheduledFault[] = [];
  let random: RandomFaults | undefined;
  for (const part of text
    .split(";")
    .map((p) => p.trim())
    .filter(Boolean)) {
    if (part.startsWith("random:")) {
      random = parseRandom(part.slice("random:".length));
      continue;
    }
    for (const item of part
      .split(",")
      .map((i) => i.trim())
      .filter(Boolean)) {
      schedule.push(parseScheduled(item));
    }
  }
  const spec: FaultSpec = {};
  if (schedule.length > 0) spec.schedule = schedule;
  if (random) spec.random = random;
  return spec;
}

function parseScheduled(item: string): ScheduledFault {
  const match = /^([a-z][a-z0-9_]*|\d{3})@(\d+)(?:-(\d+)|(\+))?((?::[a-z_]+=[\d.]+)*)$/.exec(item);
  if (!match) {
    throw new FaultSpecError(
      `fault "${item}": expected KIND@N, KIND@N-M or KIND@N+ (KIND = a status 400-599, ${NAMED.join(", ")}), optionally :retry_after=S, :slow_ms=MS, :after_events=N, :depth=N or :bytes=N`,
    );
  }
  const [, kindText = "", fromText = "", toText, plus, options = ""] = match;
  const kind = parseKind(kindText, item);
  const from = Number(fromText);
  const to = plus ? Number.POSITIVE_INFINITY : toText ? Number(toText) : from;
  if (from < 1 || to < from)
    throw new FaultSpecError(`fault "${item}": the range must be 1-based and ascending`);
  const fault: ScheduledFault = { kind, from, to };
  for (const option of options.split(":").filter(Boolean)) {
    const [key, value] = option.split("=");
    applyOption(fault, key ?? "", Number(value), item);
  }
  return fault;
}

function parseRandom(body: string): RandomFaults {
  const random: RandomFaults = { seed: 0, probabilities: {} };
  for (const pair of body
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [key = "", valueText = ""] = pair.split("=");
    const value = Number(valueText);
    if (valueText === "" || !Number.isFinite(value)) {
      throw new FaultSpecError(`random faults: "${pair}" needs a numeric value`);
    }
    if (key === "seed") random.seed = value;
    else if (key === "retry_after") random.retryAfterSeconds = value;
    else if (key === "slow_ms") random.slowMs = value;
    else if (key === "after_events") random.afterEvents = afterEvents(value, pair);
    else if (key === "depth") random.depth = wholeNumber(value, pair, key);
    else if (key === "bytes") random.bytes = wholeNumber(value, pair, key);
    else if (key.startsWith("p")) {
      if (value < 0 || value > 1) throw new FaultSpecError(`random faults: ${key} must be within 0..1`);
      random.probabilities[parseKind(key.slice(1), pair)] = value;
    } else {
      throw new FaultSpecError(
        `random faults: unknown key "${key}" (seed, pKIND, retry_after, slow_ms, after_events, depth, bytes)`,
      );
    }
  }
  let total = 0;
  for (const p of Object.values(random.probabilities)) total += p ?? 0;
  if (total > 1) throw new FaultSpecError(`random faults: the probabilities add up to ${total} > 1`);
  return random;
}

function parseKind(text: string, context: string): FaultKind {
  if (/^\d{3}$/.test(text)) {
    const status = Number(text);
    if (status < 400 || status > 599) throw new FaultSpecError(`fault "${context}": status must be 400-599`);
    return text as FaultKind;
  }
  if (NAMED.includes(text)) return text as FaultKind;
  throw new FaultSpecError(
    `fault "${context}": unknown kind "${text}" (a status 400-599, ${NAMED.join(", ")})`,
  );
}

function applyOption(fault: ScheduledFault, key: string, value: number, item: string): void {
  if (!Number.isFinite(value)) throw new FaultSpecError(`fault "${item}": ${key} needs a number`);
  if (key === "retry_after") fault.retryAfterSeconds = value;
  else if (key === "slow_ms") fault.slowMs = value;
  else if (key === "after_events") fault.afterEvents = afterEvents(value, item);
  else if (key === "depth") fault.depth = wholeNumber(value, item, key);
  else if (key === "bytes") fault.bytes = wholeNumber(value, item, key);
  else
    throw new FaultSpecError(
      `fault "${item}": unknown option "${key}" (retry_after, slow_ms, after_events, depth, bytes)`,
    );
}

function afterEvents(value: number, context: string): number {
  return wholeNumber(value, context, "after_events");
}

function wholeNumber(value: number, context: string, key: string): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new FaultSpecError(`fault "${context}": ${key} must be a whole number of at least 1`);
  }
  return value;
}
