import type { SubAgentEvent } from "../sub-agent-types.js";
import type { MetricPoint, SpanRecord, TelemetrySink } from "./spans.js";

/**
 * R-V5: a worker thread's sink. Spans and metric points cross to the parent with the
 * sub-agent's other events (gathered for one turn of the event loop, one message), and the
 * parent's exporter sends them: the thread loads no OpenTelemetry package and has nothing of its
 * own to flush. `flush` before the task's ports close.
 */
export function portSink(
  agentId: string,
  emit: (event: SubAgentEvent) => void,
): TelemetrySink & { flush(): void } {
  let spans: SpanRecord[] = [];
  let metrics: MetricPoint[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (spans.length === 0 && metrics.length === 0) return;
    emit({ type: "telemetry", agentId, spans, metrics });
    spans = [];
    metrics = [];
  };
  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };
  return {
    span(record) {
      spans.push(record);
      schedule();
    },
    metric(point) {
      metrics.push(point);
      schedule();
    },
    flush,
  };
}
