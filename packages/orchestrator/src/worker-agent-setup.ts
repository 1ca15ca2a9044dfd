import { createQueryCompactRunner } from "@forkloop/compaction";
import {
  type AgentState,
  callModel,
  type RetryClock,
  type Tool,
  type ToolUseContext,
  type Usage,
} from "@forkloop/loop-core";
import { backgroundShellsFor, forwardTaskNotices } from "@forkloop/tools";
import { meteredCompactRunner } from "./agent-context.js";
import { type AgentTelemetryTarget, agentPipeline, agentTypeOf } from "./agent-runner.js";
import type { SubAgentIo } from "./sub-agent-io.js";
import type { SubAgentTask } from "./sub-agent-types.js";
import { parseTraceparent } from "./telemetry/spans.js";

/*
 * What a worker-hosted agent (a sub-agent, a batch item) is built from beside the shared runner:
 * where its spans go, its context pipeline, its background shells and its model client's clock.
 */

/** Its spans (R-V5) hang from the parent's span named in the task; absent when telemetry is off. */
export function workerTelemetry(task: SubAgentTask, io: SubAgentIo): AgentTelemetryTarget | undefined {
  if (io.telemetry === undefined) return undefined;
  const { parent } = task;
  return {
    sink: io.telemetry,
    parent: parseTraceparent(task.traceparent),
    agent: {
      name: agentTypeOf(task.querySource),
      id: task.id,
      ...(parent === undefined ? {} : { sessionId: parent.sessionId }),
    },
  };
}

/**
 * §4 for a worker agent: its compact and session-memory requests are forks of its own prefix,
 * sent from the worker with the same tools (their definitions are in the key); `onSpent` counts
 * what each successful one cost.
 */
export function workerPipeline(
  task: SubAgentTask,
  io: SubAgentIo,
  tools: readonly Tool[],
  context: ToolUseContext,
  onSpent: (usage: Usage) => void,
) {
  const { profile } = task;
  const runner = createQueryCompactRunner({
    client: io.client,
    ...(io.beforeSend === undefined ? {} : { beforeSend: io.beforeSend }),
    tools,
    cwd: task.cwd,
    modelOverrides: profile.modelOverrides,
  });
  return agentPipeline({
    profile,
    hooks: io.hooks,
    context: () => context,
    runCompact: meteredCompactRunner(runner, onSpent),
    sessionMemory: task.sessionMemory,
  });
}

/**
 * R-T4: a worker agent's background shells. Their ends reach it as steering (between tool turns;
 * a batch item's also as one more turn after its last); when it ends — a sub-agent or a batch
 * item — every one still running is stopped, its whole process tree (the returned function). A
 * sub-agent's shells end with its final answer and no notice follows it, as Claude Code's (R-X1);
 * the parent prints them as tasks the sub-agent owns.
 */
export function workerShells(
  task: SubAgentTask,
  io: SubAgentIo,
  agentState: AgentState,
): () => Promise<void> {
  const shells = backgroundShellsFor(agentState);
  if (task.startsSession !== true) shells.endWithFinalAnswer();
  const stopForwarding = forwardTaskNotices(shells, io.steeringQueue);
  const stopTelling = shells.onTask((event) => io.emit({ type: "background_task", agentId: task.id, event }));
  return async () => {
    stopForwarding();
    await shells.close();
    stopTelling();
  };
}

/** The model client waiting on `clock` (R-R11: a pool's shared clock). */
export function clockedCallModel(clock: RetryClock): typeof callModel {
  return (request) => callModel({ ...request, clock });
}
