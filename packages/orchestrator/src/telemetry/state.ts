import { ForkloopError } from "@forkloop/loop-core/errors";
import { type TelemetryConfig, telemetryChoice } from "./config.js";
import type { SpanRef, TelemetrySink } from "./spans.js";

/**
 * R-V5: this thread's telemetry. Off (undefined) unless `startTelemetry` ran with the
 * environment asking for it; every recording site asks `activeSink()` first, so a run with
 * telemetry off pays one undefined check per site and loads nothing of OpenTelemetry.
 */
export interface ProcessTelemetry extends TelemetrySink {
  /** Sends what is buffered (spans, metrics) now. */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

let active: ProcessTelemetry | undefined;
let starting: Promise<ProcessTelemetry | undefined> | undefined;

export function activeSink(): TelemetrySink | undefined {
  return active;
}

/** Thrown for OTEL_* variables forkloop cannot follow: the message names the variable and the fix. */
export class TelemetryConfigError extends ForkloopError {
  override readonly name = "TelemetryConfigError";
  constructor(message: string) {
    super(message, { code: "invalid_telemetry_config" });
  }
}

/**
 * Starts this process's exporters when `env` asks for them (idempotent: the first call decides).
 * The @opentelemetry packages are imported here, on demand, and only then.
 */
export function startTelemetry(env: NodeJS.ProcessEnv = process.env): Promise<ProcessTelemetry | undefined> {
  if (starting) return starting;
  const choice = telemetryChoice(env);
  if (choice.kind === "off") return Promise.resolve(undefined);
  if (choice.kind === "invalid") return Promise.reject(new TelemetryConfigError(choice.problem));
  starting = load(choice.config);
  return starting;
}

async function load(config: TelemetryConfig): Promise<ProcessTelemetry> {
  const { startOtlpExport } = await import("./otlp-export.js");
  active = await startOtlpExport(config);
  // A library user's program ends when its loop empties: export what is left then.
  process.once("beforeExit", () => void active?.shutdown());
  return active;
}

/** Exports what is buffered and stops (the CLI before it exits); nothing when telemetry is off. */
export async function shutdownTelemetry(): Promise<void> {
  const telemetry = await starting?.catch(() => undefined);
  await telemetry?.shutdown();
}

/**
 * Open tool-call spans of agents in this thread, by tool_use id: a fork started by a tool call
 * (an Agent call) is that call's child, whichever code path starts it.
 */
const toolSpans = new Map<string, SpanRef>();

export function registerToolSpan(toolUseId: string, span: SpanRef | undefined): void {
  if (span === undefined) toolSpans.delete(toolUseId);
  else toolSpans.set(toolUseId, span);
}

export function toolSpan(toolUseId: string | undefined): SpanRef | undefined {
  return toolUseId === undefined ? undefined : toolSpans.get(toolUseId);
}

/** Live pools' occupancy, read when metrics are collected (a Set add per pool when off). */
export interface PoolOccupancy {
  stats(): { readonly threads: number; readonly running: number; readonly queued: number };
}

export const livePools = new Set<PoolOccupancy>();
