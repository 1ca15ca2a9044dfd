/**
 * `npm run bench -- background-work` (R-T4): one turn that starts a 10-second build and does three
 * 2-second steps of other work, with the build in the background (Bash `run_in_background`, the
 * agent told when it ends) and blocking on it (the same call in the foreground), through query()
 * on the simulator. Wall time from the prompt to the last result, one run each: the figure is
 * the ratio, what the build no longer stalls.
 */
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { query } from "@forkloop/sdk";
import { type BrainReply, type BrainRequest, startSimulator } from "@forkloop/sim";
import { type BenchResult, compare } from "./harness.js";

const BUILD_SECONDS = 10;
const STEPS = 3;
const STEP_SECONDS = 2;

const bash = (input: Record<string, unknown>): BrainReply => ({
  content: [{ type: "tool_use", name: "Bash", input }],
  adaptiveThinking: false,
});
const say = (text: string): BrainReply => ({ content: [{ type: "text", text }], adaptiveThinking: false });

function brain(request: BrainRequest): BrainReply {
  if ((request.lastUserText ?? "").includes("<task-notification>")) return say("the build is done");
  const first = JSON.stringify(request.body.messages[0]);
  const turn = request.turnIndex;
  if (turn === 0) {
    return bash({
      command: `sleep ${BUILD_SECONDS}; echo built`,
      description: "build",
      timeout: 60_000,
      ...(first.includes("background") ? { run_in_background: true } : {}),
    });
  }
  if (turn <= STEPS)
    return bash({ command: `sleep ${STEP_SECONDS}; echo step ${turn}`, description: `step ${turn}` });
  return say("other work done");
}

async function wallMs(prompt: string, url: string): Promise<number> {
  const cwd = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-bench-bg-")));
  const stateDir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-bench-bg-state-")));
  const started = performance.now();
  try {
    for await (const _message of query({
      prompt,
      options: {
        cwd,
        stateDir,
        allowedTools: ["Bash"],
        env: { ANTHROPIC_API_KEY: "bench-key", ANTHROPIC_BASE_URL: url, HOME: cwd },
      },
    })) {
      // drained: the query ends after the build's notice turn (background) or the last step
    }
    return performance.now() - started;
  } finally {
    rmSync(cwd, { recursive: true, force: true });
    rmSync(stateDir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult[]> {
  const sim = await startSimulator({ brain });
  try {
    const blocking = await wallMs("build in the foreground, then the other work", sim.url);
    const background = await wallMs("build in the background while doing the other work", sim.url);
    return [
      compare(
        "background build vs blocking build (lower is better)",
        "turn wall time",
        "ms",
        { label: "blocking", value: Math.round(blocking) },
        { label: "background", value: Math.round(background) },
        `${BUILD_SECONDS} s build + ${STEPS} × ${STEP_SECONDS} s of other work; one run each`,
      ),
    ];
  } finally {
    await sim.close();
  }
}
