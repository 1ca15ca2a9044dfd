/**
 * R-V5: `@forkloop/orchestrator/telemetry`, the light entry a program's outermost code uses (the
 * CLI's process wrapper, the batch runner): starting and stopping telemetry and recording spans
 * without loading the orchestrator or, when telemetry is off, any OpenTelemetry package.
 */
export { METRICS } from "./metric-names.js";
export { OpenSpan, parseTraceparent } from "./spans.js";
export { activeSink, shutdownTelemetry, startTelemetry, TelemetryConfigError } from "./state.js";
