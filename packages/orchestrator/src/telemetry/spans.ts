import { randomBytes } from "node:crypto";

/**
 * R-V5: a span as plain data. Spans are recorded where the agent runs — the main thread, a
 * worker thread, a queue worker's process — and a finished one is handed to a sink: the
 * process's OTLP exporter, or (in a worker thread) the sub-agent's event port, so the parent's
 * one exporter sends it. A worker thread therefore loads no OpenTelemetry package and never has
 * to flush before it is reused or ended. Ids and links are W3C Trace Context's.
 */
export interface SpanRef {
  readonly traceId: string;
  readonly spanId: string;
  /** Came from another thread or process (a traceparent), as OTLP's flags say. */
  readonly remote?: boolean;
}

export type AttributeValue = string | number | boolean | readonly string[];
export type Attributes = Record<string, AttributeValue>;

/** OpenTelemetry's SpanKind values. */
export const SPAN_KIND = { internal: 0, server: 1, client: 2, producer: 3, consumer: 4 } as const;

export interface SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  readonly parent?: SpanRef;
  readonly name: string;
  readonly kind: number;
  /** Epoch milliseconds, sub-millisecond precision. */
  readonly startMs: number;
  readonly endMs: number;
  readonly attributes: Attributes;
  /** OpenTelemetry's status codes: 1 ok, 2 error (unset when absent). */
  readonly status?: { readonly code: 1 | 2; readonly message?: string };
}

/** A recorded data point of one of the instruments in metric-names.ts. */
export interface MetricPoint {
  readonly name: string;
  readonly value: number;
  readonly attributes: Attributes;
}

/** Where finished spans and metric points go. */
export interface TelemetrySink {
  span(record: SpanRecord): void;
  metric(point: MetricPoint): void;
}

export function nowMs(): number {
  return performance.timeOrigin + performance.now();
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** A W3C `traceparent` header's parent, or undefined for anything malformed (hostile input). */
export function parseTraceparent(value: unknown): SpanRef | undefined {
  if (typeof value !== "string") return undefined;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return undefined;
  const [, traceId, spanId] = match as unknown as [string, string, string];
  if (/^0+$/.test(traceId) || /^0+$/.test(spanId)) return undefined;
  return { traceId, spanId, remote: true };
}

export function formatTraceparent(ref: SpanRef): string {
  return `00-${ref.traceId}-${ref.spanId}-01`;
}

/** A span being recorded; `end` hands it to the sink once (later calls do nothing). */
export class OpenSpan implements SpanRef {
  readonly traceId: string;
  readonly spanId: string;
  readonly #sink: TelemetrySink;
  readonly #parent: SpanRef | undefined;
  readonly #name: string;
  readonly #kind: number;
  readonly #startMs: number;
  readonly #attributes: Attributes;
  #ended = false;

  constructor(
    sink: TelemetrySink,
    name: string,
    options: {
      readonly parent?: SpanRef | undefined;
      readonly kind?: number;
      readonly attributes?: Attributes;
      readonly startMs?: number;
    } = {},
  ) {
    this.#sink = sink;
    this.#parent = options.parent;
    this.traceId = options.parent?.traceId ?? randomBytes(16).toString("hex");
    this.spanId = randomBytes(8).toString("hex");
    this.#name = name;
    this.#kind = options.kind ?? SPAN_KIND.internal;
    this.#startMs = options.startMs ?? nowMs();
    this.#attributes = { ...options.attributes };
  }

  get traceparent(): string {
    return formatTraceparent(this);
  }

  set(attributes: Attributes): this {
    Object.assign(this.#attributes, attributes);
    return this;
  }

  end(status?: { readonly error: string } | "ok", attributes?: Attributes): void {
    if (this.#ended) return;
    this.#ended = true;
    if (attributes) Object.assign(this.#attributes, attributes);
    this.#sink.span({
      traceId: this.traceId,
      spanId: this.spanId,
      ...(this.#parent === undefined ? {} : { parent: this.#parent }),
      name: this.#name,
      kind: this.#kind,
      startMs: this.#startMs,
      endMs: nowMs(),
      attributes: this.#attributes,
      ...(status === undefined
        ? {}
        : status === "ok"
          ? { status: { code: 1 as const } }
          : { status: { code: 2 as const, message: status.error } }),
    });
  }
}
