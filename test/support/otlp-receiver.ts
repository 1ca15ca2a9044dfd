import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * An OTLP/HTTP receiver for tests (R-V5): a real HTTP server on 127.0.0.1 that takes
 * `POST /v1/traces` and `POST /v1/metrics` in OTLP's JSON encoding (OTEL_EXPORTER_OTLP_PROTOCOL
 * =http/json) and keeps the decoded spans and metric data points, as a collector would.
 */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly attributes: Record<string, unknown>;
  readonly status: { readonly code?: number; readonly message?: string };
  readonly resource: Record<string, unknown>;
  readonly startMs: number;
  readonly endMs: number;
}

export interface ReceivedPoint {
  readonly metric: string;
  readonly value: number;
  readonly attributes: Record<string, unknown>;
  readonly resource: Record<string, unknown>;
}

interface OtlpKeyValue {
  key: string;
  value: Record<string, unknown>;
}

function anyValue(value: Record<string, unknown>): unknown {
  if ("stringValue" in value) return value.stringValue;
  if ("intValue" in value) return Number(value.intValue);
  if ("doubleValue" in value) return Number(value.doubleValue);
  if ("boolValue" in value) return value.boolValue;
  if ("arrayValue" in value) {
    const values = (value.arrayValue as { values?: Record<string, unknown>[] }).values ?? [];
    return values.map(anyValue);
  }
  return undefined;
}

function attributesOf(list: OtlpKeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, anyValue(value)]));
}

function nanosToMs(value: unknown): number {
  return Number(BigInt(String(value ?? 0)) / 1000n) / 1000;
}

async function bodyOf(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startOtlpReceiver() {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const contentTypes = new Set<string>();
  const server = createServer(async (request, response) => {
    const body = await bodyOf(request);
    contentTypes.add(String(request.headers["content-type"]));
    try {
      const data = JSON.parse(body) as Record<string, unknown[]>;
      if (request.url === "/v1/traces") {
        for (const rs of (data.resourceSpans ?? []) as Record<string, unknown>[]) {
          const resource = attributesOf((rs.resource as { attributes?: OtlpKeyValue[] })?.attributes);
          for (const ss of (rs.scopeSpans ?? []) as { spans?: Record<string, unknown>[] }[]) {
            for (const span of ss.spans ?? []) {
              spans.push({
                traceId: String(span.traceId),
                spanId: String(span.spanId),
                parentSpanId: String(span.parentSpanId ?? ""),
                name: String(span.name),
                kind: Number(span.kind),
                attributes: attributesOf(span.attributes as OtlpKeyValue[]),
                status: (span.status ?? {}) as ReceivedSpan["status"],
                resource,
                startMs: nanosToMs(span.startTimeUnixNano),
                endMs: nanosToMs(span.endTimeUnixNano),
              });
            }
          }
        }
      } else if (request.url === "/v1/metrics") {
        for (const rm of (data.resourceMetrics ?? []) as Record<string, unknown>[]) {
          const resource = attributesOf((rm.resource as { attributes?: OtlpKeyValue[] })?.attributes);
          for (const sm of (rm.scopeMetrics ?? []) as { metrics?: Record<string, unknown>[] }[]) {
            for (const metric of sm.metrics ?? []) {
              const shape = (metric.sum ?? metric.histogram ?? metric.gauge) as
                | { dataPoints?: Record<string, unknown>[] }
                | undefined;
              for (const point of shape?.dataPoints ?? []) {
                const value = point.asDouble ?? point.asInt ?? point.sum ?? 0;
                points.push({
                  metric: String(metric.name),
                  value: Number(value),
                  attributes: attributesOf(point.attributes as OtlpKeyValue[]),
                  resource,
                });
              }
            }
          }
        }
      }
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    } catch {
      response.writeHead(400).end();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    contentTypes,
    /** The variables that send a forkloop process's telemetry here. */
    env(extra: Record<string, string> = {}): Record<string, string> {
      return {
        CLAUDE_CODE_ENABLE_TELEMETRY: "1",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_METRICS_EXPORTER: "otlp",
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        ...extra,
      };
    },
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
