import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message } from "@forkloop/loop-core";
import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { agentRequests, weightedTokens } from "@forkloop/sim/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createAgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import { runToEnd, testSessionOptions, toolResultTexts } from "./testing/index.js";
import { readTranscript } from "./transcript.js";

/**
 * R-R13: sub-agents that continue. A crash (kill -9) leaves the transcripts as they were at that
 * instant — every record is appended with one synchronous write — so the test copies the session's
 * directory while three sub-agents wait on their second request: that copy is what a killed
 * process leaves. The resumed session continues each sub-agent from its own transcript.
 */

const FILES = ["alpha.txt", "beta.txt", "gamma.txt"];

/** Main: three Agent calls, then a summary. Each sub-agent: Read its file, then report (gated). */
function brainWith(gate: { open: boolean; waiting: number }, isolated = false): Brain {
  return async (request) => {
    const source = request.querySource ?? "";
    if (source.startsWith("agent:")) {
      if (request.lastToolResults.length === 0) {
        const file = /read (\w+\.txt)/.exec(request.lastUserText ?? "")?.[1] ?? "alpha.txt";
        return { content: [{ type: "tool_use", name: "Read", input: { file_path: file } }] };
      }
      if (!gate.open) {
        gate.waiting++;
        await new Promise(() => {}); // mid-turn until the process "dies"
      }
      return {
        content: [{ type: "text", text: `summary: ${request.lastToolResults[0]?.content.slice(0, 20)}` }],
      };
    }
    if (request.lastToolResults.length > 0)
      return { content: [{ type: "text", text: "all three reported" }] };
    if (request.lastUserText === "Go on.") return { content: [{ type: "text", text: "going on" }] };
    return {
      content: FILES.map((file) => ({
        type: "tool_use" as const,
        name: "Agent",
        input: {
          description: `read ${file}`,
          prompt: `read ${file} and summarise it`,
          ...(isolated ? { isolation: "worktree" } : {}),
        },
      })),
    };
  };
}

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function setup(gate: { open: boolean; waiting: number }, isolated = false) {
  const sim: Simulator = await startSimulator({ brain: brainWith(gate, isolated) });
  open.push(sim);
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-continue-")));
  open.push({ close: async () => rmSync(dir, { recursive: true, force: true }) });
  for (const file of FILES) writeFileSync(join(dir, file), `${file}: ${"line of text\n".repeat(30)}`);
  if (isolated) {
    const git = (...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd: dir });
    writeFileSync(join(dir, ".gitignore"), "sessions/\ncrashed/\n");
    git("init", "-q");
    git("add", "-A");
    git("commit", "-qm", "base");
  }
  return { sim, dir };
}

describe("R-R13: an Agent call cut off by a crash continues on resume", () => {
  it("R-R13: three sub-agents mid-turn at a crash: on resume each one's next request carries its earlier messages and reads them from the cache; the Agent calls get their reports, not errors; tokens ≤ 1.1× an uninterrupted run", async () => {
    // The uninterrupted run, for the token budget.
    const calm = await setup({ open: true, waiting: 0 });
    const calmPool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: calm.sim.url } });
    open.push(calmPool);
    const calmSession = await createSession(
      testSessionOptions({ baseURL: calm.sim.url, dir: calm.dir, pool: calmPool }),
    );
    await runToEnd(calmSession.run("Summarise the three files."));
    await calmSession.close();
    const uninterrupted = weightedTokens(calm.sim.requests());

    const gate = { open: false, waiting: 0 };
    const { sim, dir } = await setup(gate);
    const pool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: sim.url } });
    open.push(pool);
    const options = testSessionOptions({ baseURL: sim.url, dir, pool });
    const first = await createSession(options);
    const stop = new AbortController();
    const running = runToEnd(first.run("Summarise the three files.", { signal: stop.signal })).catch(
      () => undefined,
    );
    while (gate.waiting < 3) await new Promise((resolve) => setTimeout(resolve, 50));
    // What kill -9 leaves: the state directory as it is now.
    const crashed = join(dir, "crashed");
    cpSync(options.sessionsDir, crashed, { recursive: true });
    stop.abort("the process died");
    await running;
    await first.close();

    const agentsDir = join(crashed, first.sessionId, "agents");
    const before = new Map<string, Message[]>();
    for (const name of readdirSync(agentsDir)) {
      const read = await readTranscript(join(agentsDir, name));
      expect(read.fold.terminal).toBeUndefined();
      before.set(read.fold.start?.agentId ?? name, [...read.fold.messages()]);
    }
    expect(before.size).toBe(3);

    gate.open = true;
    const requestsBefore = sim.requests().length;
    const resumed = await createSession({
      ...options,
      sessionsDir: crashed,
      resumeSessionId: first.sessionId,
    });
    const terminal = await runToEnd(resumed.run("Go on."));
    await resumed.close();
    expect(terminal.reason).toBe("completed");

    const after = agentRequests(sim.requests().slice(requestsBefore));
    expect(after).toHaveLength(3);
    for (const request of after) {
      const body = JSON.parse(request.rawBody) as { messages: { content: unknown }[] };
      const text = JSON.stringify(body.messages);
      // Its earlier messages: the Read it called and that file's content, then nothing new but them.
      const own = [...before.values()].find((messages) =>
        messages.some(
          (message) =>
            message.type === "assistant" &&
            message.message.content.some((block) => block.type === "tool_use" && text.includes(block.id)),
        ),
      );
      expect(own, text.slice(0, 400)).toBeDefined();
      // The call and its result (the file's content), as they were before the crash.
      const read = own?.flatMap((message) =>
        message.type === "assistant"
          ? message.message.content.filter((block) => block.type === "tool_use")
          : [],
      )[0];
      expect(text.split(read?.type === "tool_use" ? read.id : "?").length - 1).toBe(2);
      expect(text).toContain("line of text");
      expect(request.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(0);
    }
    const reports = toolResultTexts(resumed.history());
    expect(reports.filter((text) => text.startsWith("summary: "))).toHaveLength(3);
    expect(reports.some((text) => text.includes("may or may not have run"))).toBe(false);

    const interrupted = weightedTokens(sim.requests());
    console.log(
      `R-R13 tokens (cost-weighted): uninterrupted ${uninterrupted}, crashed + resumed ${interrupted}`,
    );
    expect(interrupted / uninterrupted).toBeLessThanOrEqual(1.1);
  }, 120_000);
  it("R-R13, R-B2: a sub-agent cut off while isolated in a worktree is not continued in the tree on resume: its call's result says its worktree was removed (control: the test above continues unisolated ones)", async () => {
    const gate = { open: false, waiting: 0 };
    const { sim, dir } = await setup(gate, true);
    const pool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: sim.url } });
    open.push(pool);
    const options = testSessionOptions({ baseURL: sim.url, dir, pool });
    const first = await createSession(options);
    const stop = new AbortController();
    const running = runToEnd(first.run("Summarise the three files.", { signal: stop.signal })).catch(
      () => undefined,
    );
    const deadline = Date.now() + 60_000;
    while (gate.waiting < 3 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // The state directory lies in the checkout and is ignored (as a user's .forkloop/ would be).
    expect(gate.waiting).toBeGreaterThan(0);
    const crashed = join(dir, "crashed");
    cpSync(options.sessionsDir, crashed, { recursive: true });
    stop.abort("the process died");
    await running;
    await first.close();
    const cut = readdirSync(join(crashed, first.sessionId, "isolated-agents")).length;
    expect(cut).toBeGreaterThan(0);

    gate.open = true;
    const requestsBefore = sim.requests().length;
    const resumed = await createSession({
      ...options,
      sessionsDir: crashed,
      resumeSessionId: first.sessionId,
    });
    const terminal = await runToEnd(resumed.run("Go on."));
    await resumed.close();
    expect(terminal.reason).toBe("completed");
    // None of them ran again, in the tree or anywhere.
    expect(agentRequests(sim.requests().slice(requestsBefore))).toHaveLength(0);
    const reports = toolResultTexts(resumed.history());
    expect(
      reports.filter((text) => text.includes("its worktree and the edits in it were removed")),
    ).toHaveLength(3);
  }, 120_000);
});
