/**
 * R-V5: the exporters, loaded by dynamic import from state.ts only when the environment asks for
 * telemetry (a test proves a run with it off loads no module of this file's packages). Spans
 * arrive finished, as plain records from any thread of this process (spans.ts); they are handed
 * to the SDK's BatchSpanProcessor as the ReadableSpans its OTLP exporter reads. Metric points
 * are recorded on the SDK's instruments; the pool's occupancy is observed at collection.
 */
import { randomUUID } from "node:crypto";
import type { Counter, Histogram, HrTime, Attributes as OtelAttributes } from "@opentelemetry/api";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import {
  MeterProvider,
  PeriodicExportingMetricReader,
  type PushMetricExporter,
} from "@opentelemetry/sdk-metrics";
import { BatchSpanProcessor, type ReadableSpan, type SpanExporter } from "@opentelemetry/sdk-trace";
import type { TelemetryConfig } from "./config.js";
import { METRICS, POOL_GAUGES } from "./metric-names.js";
import type { MetricPoint, SpanRecord } from "./spans.js";
import { livePools, type ProcessTelemetry } from "./state.js";

const SCOPE = { name: "forkloop", version: "0.1.0" };

function hrTime(epochMs: number): HrTime {
  const seconds = Math.floor(epochMs / 1000);
  return [seconds, Math.round((epochMs - seconds * 1000) * 1e6)];
}

async function spanExporter(config: TelemetryConfig): Promise<SpanExporter> {
  // Each exporter reads OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT, _HEADERS and _TIMEOUT itself.
  const { OTLPTraceExporter } =
    config.tracesProtocol === "http/json"
      ? await import("@opentelemetry/exporter-trace-otlp-http")
      : await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter();
}

async function metricExporter(config: TelemetryConfig): Promise<PushMetricExporter> {
  const { OTLPMetricExporter } =
    config.metricsProtocol === "http/json"
      ? await import("@opentelemetry/exporter-metrics-otlp-http")
      : await import("@opentelemetry/exporter-metrics-otlp-proto");
  return new OTLPMetricExporter();
}

export async function startOtlpExport(config: TelemetryConfig): Promise<ProcessTelemetry> {
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win over forkloop's defaults.
  const resource = resourceFromAttributes({
    "service.name": "forkloop",
    "service.version": SCOPE.version,
    "service.instance.id": randomUUID(),
    "process.pid": process.pid,
  }).merge(detectResources({ detectors: [envDetector] }));

  // A batch's many agents end spans fast: a larger queue than the default 2,048 drops none.
  const processor = config.traces
    ? new BatchSpanProcessor({ exporter: await spanExporter(config), maxQueueSize: 16_384 })
    : undefined;

  let meters: MeterProvider | undefined;
  const counters = new Map<string, Counter | Histogram>();
  if (config.metrics) {
    meters = new MeterProvider({
      resource,
      readers: [
        new PeriodicExportingMetricReader({
          exporter: await metricExporter(config),
          exportIntervalMillis: config.metricIntervalMs,
          exportTimeoutMillis: Math.min(30_000, config.metricIntervalMs),
        }),
      ],
    });
    const meter = meters.getMeter(SCOPE.name, SCOPE.version);
    for (const spec of Object.values(METRICS)) {
      const options = { unit: spec.unit, description: spec.description };
      counters.set(
        spec.name,
        spec.kind === "counter"
          ? meter.createCounter(spec.name, options)
          : meter.createHistogram(spec.name, options),
      );
    }
    const gauges = Object.fromEntries(
      Object.entries(POOL_GAUGES).map(([key, spec]) => [
        key,
        meter.createObservableGauge(spec.name, { unit: spec.unit, description: spec.description }),
      ]),
    ) as Record<keyof typeof POOL_GAUGES, ReturnType<typeof meter.createObservableGauge>>;
    meter.addBatchObservableCallback((result) => {
      let threads = 0;
      let running = 0;
      let queued = 0;
      for (const pool of livePools) {
        const stats = pool.stats();
        threads += stats.threads;
        running += stats.running;
        queued += stats.queued;
      }
      result.observe(gauges.threads, threads);
      result.observe(gauges.running, running);
      result.observe(gauges.queued, queued);
    }, Object.values(gauges));
  }

  return {
    span(record: SpanRecord) {
      if (!processor) return;
      const readable: ReadableSpan = {
        name: record.name,
        kind: record.kind,
        spanContext: () => ({ traceId: record.traceId, spanId: record.spanId, traceFlags: 1 }),
        ...(record.parent === undefined
          ? {}
          : {
              parentSpanContext: {
                traceId: record.parent.traceId,
                spanId: record.parent.spanId,
                traceFlags: 1,
                ...(record.parent.remote ? { isRemote: true } : {}),
              },
            }),
        startTime: hrTime(record.startMs),
        endTime: hrTime(record.endMs),
        duration: hrTime(Math.max(0, record.endMs - record.startMs)),
        status: record.status ?? { code: 0 },
        attributes: record.attributes as OtelAttributes,
        links: [],
        events: [],
        ended: true,
        resource,
        instrumentationScope: SCOPE,
        droppedAttributesCount: 0,
        droppedEventsCount: 0,
        droppedLinksCount: 0,
      };
      processor.onEnd(readable);
    },
    metric(point: MetricPoint) {
      const instrument = counters.get(point.name);
      if (!instrument || !Number.isFinite(point.value)) return;
      const attributes = point.attributes as OtelAttributes;
      if ("add" in instrument) instrument.add(point.value, attributes);
      else instrument.record(point.value, attributes);
    },
    async flush() {
      await Promise.all([processor?.forceFlush(), meters?.forceFlush()]);
    },
    async shutdown() {
      await Promise.all([processor?.shutdown(), meters?.shutdown()]);
    },
  };
}
