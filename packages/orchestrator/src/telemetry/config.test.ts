import { describe, expect, it } from "vitest";
import { telemetryChoice } from "./config.js";
import { parseTraceparent } from "./spans.js";

const ON = { CLAUDE_CODE_ENABLE_TELEMETRY: "1" };

describe("R-V5: telemetry is decided by the environment alone", () => {
  it("R-V5: off unless the switch and an exporter both ask; OTEL_SDK_DISABLED wins", () => {
    expect(telemetryChoice({}).kind).toBe("off");
    expect(telemetryChoice({ OTEL_TRACES_EXPORTER: "otlp" }).kind).toBe("off");
    expect(telemetryChoice({ ...ON }).kind).toBe("off");
    expect(telemetryChoice({ ...ON, OTEL_TRACES_EXPORTER: "none" }).kind).toBe("off");
    expect(telemetryChoice({ ...ON, OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "true" }).kind).toBe(
      "off",
    );
    expect(telemetryChoice({ FORKLOOP_ENABLE_TELEMETRY: "true", OTEL_METRICS_EXPORTER: "otlp" })).toEqual({
      kind: "on",
      config: {
        traces: false,
        metrics: true,
        tracesProtocol: "http/protobuf",
        metricsProtocol: "http/protobuf",
        metricIntervalMs: 60_000,
      },
    });
  });

  it("R-V5: per-signal protocol variables win over the general one", () => {
    const choice = telemetryChoice({
      ...ON,
      OTEL_TRACES_EXPORTER: "otlp",
      OTEL_METRICS_EXPORTER: "otlp",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf",
      OTEL_METRIC_EXPORT_INTERVAL: "5000",
    });
    expect(choice).toMatchObject({
      kind: "on",
      config: { tracesProtocol: "http/json", metricsProtocol: "http/protobuf", metricIntervalMs: 5000 },
    });
  });

  it("R-V5: what forkloop cannot follow is named with its fix", () => {
    expect(telemetryChoice({ ...ON, OTEL_TRACES_EXPORTER: "zipkin" })).toEqual({
      kind: "invalid",
      problem: "OTEL_TRACES_EXPORTER=zipkin names no exporter forkloop has: use otlp or none",
    });
    expect(
      telemetryChoice({ ...ON, OTEL_METRICS_EXPORTER: "otlp", OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }),
    ).toMatchObject({
      kind: "invalid",
      problem: expect.stringContaining("OTEL_EXPORTER_OTLP_PROTOCOL=grpc"),
    });
    expect(
      telemetryChoice({ ...ON, OTEL_METRICS_EXPORTER: "otlp", OTEL_METRIC_EXPORT_INTERVAL: "soon" }),
    ).toMatchObject({
      kind: "invalid",
      problem: expect.stringContaining("OTEL_METRIC_EXPORT_INTERVAL=soon"),
    });
  });

  it("R-V5: a traceparent from another process (job data, TRACEPARENT) is read only when well formed", () => {
    expect(parseTraceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")).toEqual({
      traceId: "0af7651916cd43dd8448eb211c80319c",
      spanId: "b7ad6b7169203331",
      remote: true,
    });
    for (const bad of [
      undefined,
      42,
      "",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
      "00-00000000000000000000000000000000-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
      "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
      "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\n<script>",
    ]) {
      expect(parseTraceparent(bad)).toBeUndefined();
    }
  });
});
