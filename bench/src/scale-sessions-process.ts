/**
 * The measured side of `scale.bench.ts`'s live agents: `argv[2]` concurrent `query()` sessions of
 * `@forkloop/sdk` in this one process, against the simulator named by ANTHROPIC_BASE_URL. It tells
 * the bench when each session started (epoch ms) and when all have ended.
 */
import { query } from "@forkloop/sdk";

export type ScaleSessionsMessage =
  | { readonly type: "started"; readonly at: readonly number[] }
  | { readonly type: "done"; readonly failed: number };

const count = Number(process.argv[2]);
const cwd = process.argv[3] ?? process.cwd();
const send = (message: ScaleSessionsMessage) => process.send?.(message);

async function session(index: number): Promise<boolean> {
  for await (const message of query({
    prompt: `session ${index}: say ok`,
    options: { cwd, maxTurns: 1, stderr: () => {} },
  })) {
    if (message.type === "result") return !message.is_error;
  }
  return false;
}

const startedAt: number[] = [];
const runs: Promise<boolean>[] = [];
for (let index = 0; index < count; index++) {
  startedAt.push(performance.timeOrigin + performance.now());
  runs.push(session(index).catch(() => false));
}
send({ type: "started", at: startedAt });
const outcomes = await Promise.all(runs);
send({ type: "done", failed: outcomes.filter((ok) => !ok).length });
process.disconnect?.();
