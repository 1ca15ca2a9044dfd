import type { SubAgentEvent, SubAgentResult, SubAgentTask } from "../sub-agent-types.js";
import { OpenSpan, parseTraceparent } from "./spans.js";
import { activeSink, toolSpan } from "./state.js";

/**
 * R-V5: a fork's span in the parent, child of the caller's trace context (a batch item) or of
 * the tool call that started it (an Agent call); the worker's spans come back as events and go
 * to this process's exporter.
 */
export function forkSpan(task: SubAgentTask) {
  const sink = activeSink();
  if (sink === undefined) return undefined;
  const span = new OpenSpan(sink, `fork ${task.querySource}`, {
    parent: parseTraceparent(task.traceparent) ?? toolSpan(task.parent?.toolUseId),
    attributes: {
      "forkloop.agent.id": task.id,
      "forkloop.query_source": task.querySource,
      ...(task.description === undefined ? {} : { "forkloop.fork.description": task.description }),
    },
  });
  return {
    span,
    ingest(event: Extract<SubAgentEvent, { type: "telemetry" }>) {
      for (const record of event.spans) sink.span(record);
      for (const point of event.metrics) sink.metric(point);
    },
    end(result: SubAgentResult) {
      span.end(result.status === "completed" ? "ok" : { error: result.error?.message ?? result.status }, {
        "forkloop.fork.status": result.status,
        ...(result.terminal === undefined ? {} : { "forkloop.terminal_reason": result.terminal }),
        "forkloop.turns": result.turns,
        "forkloop.cost_usd": result.costUsd,
        "gen_ai.usage.output_tokens": result.usage.outputTokens,
        "gen_ai.usage.cache_read.input_tokens": result.usage.cacheReadInputTokens,
      });
    },
  };
}
