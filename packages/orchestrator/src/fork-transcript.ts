import { recordAgentStart } from "./agent-runner.js";
import type { SubAgentIo } from "./sub-agent-io.js";
import { subAgentPrefix } from "./sub-agent-prefix.js";
import type { SubAgentTask } from "./sub-agent-types.js";
import { TranscriptWriter } from "./transcript.js";

/**
 * A sub-agent's transcript (none without a path): its start with the parent link, its tools and
 * turn limit, and its own request prefix (R-R13, so a resume can continue it as a cache-safe
 * fork) — a continuation appends to the transcript it continues, whose start is there already —
 * and a record of each 429 pause the host saw.
 */
export function openForkTranscript(
  task: SubAgentTask,
  io: Pick<SubAgentIo, "onRateLimited">,
): TranscriptWriter | undefined {
  if (task.transcriptPath === undefined) return undefined;
  const transcript = new TranscriptWriter(task.transcriptPath);
  const maxTurns = task.profile.limits.maxTurns;
  if (task.continues !== true) {
    const { id, cwd, querySource, profile } = task;
    recordAgentStart(
      transcript,
      { sessionId: id, agentId: id, cwd, model: task.cacheSafeParams.model, querySource, profile },
      {
        ...(task.parent === undefined ? {} : { parent: task.parent }),
        toolNames: task.toolNames,
        ...(maxTurns === undefined ? {} : { maxTurns }),
      },
    );
    transcript.appendRequestPrefix(subAgentPrefix(task));
  }
  io.onRateLimited?.((pause) =>
    transcript.append({
      type: "rate_limited",
      at: new Date(pause.at).toISOString(),
      retryAfterMs: pause.retryAfterMs,
      until: new Date(pause.until).toISOString(),
    }),
  );
  return transcript;
}
