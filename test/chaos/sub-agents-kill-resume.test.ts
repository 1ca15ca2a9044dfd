import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startCli, streamJsonLines, waitForOutput } from "@forkloop/cli/testing";
import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { agentRequests, weightedTokens } from "@forkloop/sim/testing";
import { afterAll, describe, expect, it } from "vitest";

/**
 * R-R13 through the built CLI: `forkloop run` is killed with -9 while three sub-agents (worker
 * threads) wait on their second request, then `forkloop run --resume S`. Each sub-agent's next
 * request carries its earlier messages — its Read call and the file it read — and reads them from
 * the cache; the total tokens stay within 1.1× an uninterrupted run. (The orchestrator's
 * sub-agent-continuation.test.ts copies the state directory at that instant; here the process
 * really dies.) The simulator runs in this process, so its brain sees every request.
 */

const FILES = ["alpha.txt", "beta.txt", "gamma.txt"];
const TASK = "Summarise the three files.";

interface Gate {
  open: boolean;
  waiting: number;
  /** Resolved once every sub-agent waits on its second request. */
  readonly allWaiting: Promise<void>;
  arrived(): void;
}

function gate(open: boolean): Gate {
  let resolve = () => {};
  const allWaiting = new Promise<void>((done) => {
    resolve = done;
  });
  const state: Gate = {
    open,
    waiting: 0,
    allWaiting,
    arrived() {
      if (++state.waiting === FILES.length) resolve();
    },
  };
  return state;
}

/** Main: three Agent calls, then a summary. Each sub-agent: Read its file, then report (held at the gate). */
function brainWith(held: Gate): Brain {
  return async (request) => {
    if ((request.querySource ?? "").startsWith("agent:")) {
      if (request.lastToolResults.length === 0) {
        const file = /read (\w+\.txt)/.exec(request.lastUserText ?? "")?.[1] ?? "alpha.txt";
        return { content: [{ type: "tool_use", name: "Read", input: { file_path: file } }] };
      }
      if (!held.open) {
        held.arrived();
        await new Promise(() => {}); // mid-turn until the process dies
      }
      return {
        content: [{ type: "text", text: `summary: ${request.lastToolResults[0]?.content.slice(0, 20)}` }],
      };
    }
    if (request.lastToolResults.length > 0)
      return { content: [{ type: "text", text: "all three reported (scripted by the simulator)" }] };
    return {
      content: FILES.map((file) => ({
        type: "tool_use" as const,
        name: "Agent",
        input: { description: `read ${file}`, prompt: `read ${file} and summarise it` },
      })),
    };
  };
}

const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const step of cleanup.reverse()) await step();
});

async function project(held: Gate): Promise<{ sim: Simulator; dir: string; env: Record<string, string> }> {
  const sim = await startSimulator({ brain: brainWith(held) });
  const dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-agents-kill-"));
  cleanup.push(
    () => sim.close(),
    () => rm(dir, { recursive: true, force: true }),
  );
  for (const file of FILES) await writeFile(join(dir, file), `${file}: ${"line of text\n".repeat(30)}`);
  return { sim, dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } };
}

/** The ids of the tool calls in a request's messages that are answered by a result there too. */
function answeredCalls(rawBody: string): string[] {
  const body = JSON.parse(rawBody) as { messages: { content: unknown }[] };
  const blocks = body.messages.flatMap((message) =>
    Array.isArray(message.content)
      ? (message.content as { type: string; id?: string; tool_use_id?: string }[])
      : [],
  );
  const results = new Set(
    blocks.flatMap((block) => (block.type === "tool_result" ? [block.tool_use_id] : [])),
  );
  return blocks.flatMap((block) => (block.type === "tool_use" && results.has(block.id) ? [block.id!] : []));
}

describe("R-R13 chaos: kill -9 of `forkloop run` while three sub-agents are mid-turn, then --resume", () => {
  it("R-R13: each sub-agent's next request carries its earlier messages, read from the cache; the Agent calls get their reports; tokens ≤ 1.1× an uninterrupted run", async () => {
    // The uninterrupted run, for the token budget.
    const calm = await project(gate(true));
    const uninterrupted = await runCliInProcess(["run", TASK], { cwd: calm.dir, env: calm.env });
    expect(uninterrupted.code, uninterrupted.stderr).toBe(0);
    expect(agentRequests(calm.sim.requests())).toHaveLength(6);

    const held = gate(false);
    const { sim, dir, env } = await project(held);
    const run = startCli(["run", TASK, "--output-format", "stream-json"], { cwd: dir, env });
    const init = await waitForOutput(run.child, run.stdout, (text) => text.includes("\n"));
    const sessionId = streamJsonLines(init)[0]?.session_id ?? "";
    expect(sessionId).not.toBe("");
    await held.allWaiting;
    // Each sub-agent's first turn is done (its Read call and result), its second is in flight.
    const before = agentRequests(sim.requests()).map((record) => answeredCalls(record.rawBody));
    expect(before.filter((calls) => calls.length === 1)).toHaveLength(3);
    run.child.kill("SIGKILL");
    expect((await run.exited).signal).toBe("SIGKILL");

    held.open = true;
    const requestsBefore = sim.requests().length;
    const resumed = await runCliInProcess(
      ["run", "--resume", sessionId, "Go on.", "--output-format", "json"],
      {
        cwd: dir,
        env,
      },
    );
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout).result).toContain("all three reported");

    const after = agentRequests(sim.requests().slice(requestsBefore));
    expect(after).toHaveLength(3);
    const earlierCalls = new Set(before.flat());
    for (const request of after) {
      // Its earlier messages: its own Read call and the file's content, as before the kill.
      const calls = answeredCalls(request.rawBody);
      expect(calls).toHaveLength(1);
      expect(earlierCalls.has(calls[0]!), request.rawBody.slice(0, 400)).toBe(true);
      expect(request.rawBody).toContain("line of text");
      // Read from the cache the sub-agent wrote before the kill.
      expect(request.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
    }
    // Each continued its own: three different sub-agents.
    expect(new Set(after.map((request) => answeredCalls(request.rawBody)[0])).size).toBe(3);

    const killed = weightedTokens(sim.requests());
    const calmTokens = weightedTokens(calm.sim.requests());
    console.log(
      `R-R13 tokens (cost-weighted, built CLI): uninterrupted ${calmTokens}, killed + resumed ${killed}`,
    );
    expect(killed / calmTokens).toBeLessThanOrEqual(1.1);
  }, 120_000);
});
