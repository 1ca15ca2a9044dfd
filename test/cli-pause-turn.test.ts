import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/** A server-tool loop the API paused mid-turn (the simulator runs no server tool). */
const PAUSED = {
  content: [
    { type: "text", text: "Searching." },
    { type: "server_tool_use", name: "web_search", input: { query: "forkloop" } },
  ],
  stop_reason: "pause_turn",
};

let dir: string;
let sim: Awaited<ReturnType<typeof startSimInProcess>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-pause-turn-"));
  const scenario = join(dir, "pause-scenario.json");
  await writeFile(
    scenario,
    JSON.stringify({
      rules: [
        // A server that pauses every continuation of this prompt.
        { match: { lastUserText: "pause forever" }, reply: PAUSED },
        // Otherwise the first call pauses and its continuation (turn 1) finishes.
        { match: { turn: 0 }, reply: PAUSED },
      ],
      fallback: { content: [{ type: "text", text: "Found it (scripted by the simulator)." }] },
    }),
  );
  sim = await startSimInProcess(dir, ["--scenario", scenario]);
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const resultOf = (stdout: string) =>
  JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as Record<string, unknown>;

describe("pause_turn through the CLI", () => {
  it("forkloop run continues a paused turn with the paused reply as-is and ends with the continuation's answer", async () => {
    const before = (await sim.requests()).length;
    const run = await runCliInProcess(["run", "search once", "--output-format", "json"], {
      cwd: dir,
      env: sim.env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(resultOf(run.stdout)).toMatchObject({
      terminal_reason: "completed",
      result: "Found it (scripted by the simulator).",
    });
    const requests = (await sim.requests()).slice(before).filter((r) => r.path === "/v1/messages");
    expect(requests.map((r) => r.status)).toEqual([200, 200]);
    const last = (
      JSON.parse(requests[1]?.rawBody ?? "{}") as { messages: { role: string; content: unknown }[] }
    ).messages.at(-1);
    expect(last?.role).toBe("assistant");
    expect(JSON.stringify(last?.content)).toContain('"type":"server_tool_use"');
  });

  it("a server that pauses forever: 11 accepted requests, then a typed pause_turn_limit model_error (exit 4)", async () => {
    const before = (await sim.requests()).length;
    const run = await runCliInProcess(["run", "pause forever", "--output-format", "json"], {
      cwd: dir,
      env: sim.env,
    });
    expect(run.code, run.stderr).toBe(4);
    const result = resultOf(run.stdout);
    expect(result).toMatchObject({ terminal_reason: "model_error", is_error: true });
    expect(JSON.stringify(result.errors)).toContain("pause_turn");
    const requests = (await sim.requests()).slice(before).filter((r) => r.path === "/v1/messages");
    expect(requests).toHaveLength(11);
    expect(requests.every((r) => r.status === 200)).toBe(true);
  });
});
