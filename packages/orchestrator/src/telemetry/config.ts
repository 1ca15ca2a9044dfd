/**
 * R-V5: whether this process exports telemetry, read from the environment alone (no
 * @opentelemetry package is loaded to decide it). The switch is Claude Code's,
 * `CLAUDE_CODE_ENABLE_TELEMETRY=1` (or forkloop's own name, `FORKLOOP_ENABLE_TELEMETRY=1`), and a
 * signal is exported when its standard variable names an exporter forkloop has:
 * `OTEL_TRACES_EXPORTER=otlp`, `OTEL_METRICS_EXPORTER=otlp` (`none` or unset: that signal is off;
 * there is no `console` exporter, whose lines would mix with `forkloop run`'s output). `OTEL_SDK_DISABLED=true` turns everything off, as in every
 * OpenTelemetry SDK. Off is the default: then nothing else here is ever loaded.
 */

export type OtlpProtocol = "http/protobuf" | "http/json";

export interface TelemetryConfig {
  readonly traces: boolean;
  readonly metrics: boolean;
  /** OTEL_EXPORTER_OTLP_PROTOCOL (per-signal variables win); the spec's default is http/protobuf. */
  readonly tracesProtocol: OtlpProtocol;
  readonly metricsProtocol: OtlpProtocol;
  /** OTEL_METRIC_EXPORT_INTERVAL, ms (the spec's default: 60 s). */
  readonly metricIntervalMs: number;
}

export type TelemetryChoice =
  | { readonly kind: "off" }
  | { readonly kind: "on"; readonly config: TelemetryConfig }
  | { readonly kind: "invalid"; readonly problem: string };

const OFF: TelemetryChoice = { kind: "off" };

function truthy(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}

function exporterOf(
  env: NodeJS.ProcessEnv,
  name: "OTEL_TRACES_EXPORTER" | "OTEL_METRICS_EXPORTER",
): boolean | { problem: string } {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === "" || raw === "none") return false;
  // The spec allows a comma-separated list; forkloop has the one exporter.
  if (raw.split(",").some((part) => part.trim() === "otlp")) return true;
  return { problem: `${name}=${env[name]} names no exporter forkloop has: use otlp or none` };
}

function protocolOf(
  env: NodeJS.ProcessEnv,
  signal: "TRACES" | "METRICS",
): OtlpProtocol | { problem: string } {
  const specific = `OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`;
  const name = env[specific] !== undefined ? specific : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const raw = env[name]?.trim();
  if (raw === undefined || raw === "" || raw === "http/protobuf") return "http/protobuf";
  if (raw === "http/json") return "http/json";
  return {
    problem: `${name}=${raw} is not a protocol forkloop exports with: use http/protobuf or http/json (an OTLP/HTTP endpoint, usually port 4318; grpc is not supported)`,
  };
}

/** What the environment asks for; `invalid` names the variable and its fix. */
export function telemetryChoice(env: NodeJS.ProcessEnv): TelemetryChoice {
  if (!truthy(env.CLAUDE_CODE_ENABLE_TELEMETRY) && !truthy(env.FORKLOOP_ENABLE_TELEMETRY)) return OFF;
  if (truthy(env.OTEL_SDK_DISABLED)) return OFF;
  const traces = exporterOf(env, "OTEL_TRACES_EXPORTER");
  const metrics = exporterOf(env, "OTEL_METRICS_EXPORTER");
  for (const choice of [traces, metrics])
    if (typeof choice === "object") return { kind: "invalid", ...choice };
  if (traces === false && metrics === false) return OFF;
  const tracesProtocol = protocolOf(env, "TRACES");
  const metricsProtocol = protocolOf(env, "METRICS");
  if (traces === true && typeof tracesProtocol === "object") return { kind: "invalid", ...tracesProtocol };
  if (metrics === true && typeof metricsProtocol === "object") return { kind: "invalid", ...metricsProtocol };
  const interval = env.OTEL_METRIC_EXPORT_INTERVAL?.trim();
  const intervalMs = interval === undefined || interval === "" ? 60_000 : Number(interval);
  if (!Number.isInteger(intervalMs) || intervalMs <= 0) {
    return {
      kind: "invalid",
      problem: `OTEL_METRIC_EXPORT_INTERVAL=${interval} is not a positive whole number of milliseconds`,
    };
  }
  return {
    kind: "on",
    config: {
      traces: traces === true,
      metrics: metrics === true,
      tracesProtocol: typeof tracesProtocol === "object" ? "http/protobuf" : tracesProtocol,
      metricsProtocol: typeof metricsProtocol === "object" ? "http/protobuf" : metricsProtocol,
      metricIntervalMs: intervalMs,
    },
  };
}
