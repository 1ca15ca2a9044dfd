import type { AgentTelemetryTarget } from "../agent-runner.js";
import { OpenSpan, parseTraceparent } from "./spans.js";
import { activeSink, startTelemetry } from "./state.js";

/**
 * R-V5: a session's span, when the environment turns telemetry on (a library program's first
 * session starts the exporters; the CLI has started them already). A TRACEPARENT variable (the
 * OpenTelemetry convention for a process started by a traced one) makes the session its child.
 * Variables forkloop cannot follow leave a library's telemetry off; the CLI refuses them (exit 2).
 */
export async function sessionSpan(session: {
  readonly sessionId: string;
  readonly resumed: boolean;
}): Promise<
  | {
      readonly agent: (name: string, id: string) => AgentTelemetryTarget;
      end(): void;
    }
  | undefined
> {
  await startTelemetry().catch(() => undefined);
  const sink = activeSink();
  if (!sink) return undefined;
  const span = new OpenSpan(sink, "forkloop.session", {
    parent: parseTraceparent(process.env.TRACEPARENT),
    attributes: { "gen_ai.conversation.id": session.sessionId, "forkloop.session.resumed": session.resumed },
  });
  return {
    agent: (name, id) => ({ sink, parent: span, agent: { name, id, sessionId: session.sessionId } }),
    end: () => span.end("ok"),
  };
}
