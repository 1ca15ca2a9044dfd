import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { runCli, startCli, withSimProcess, writeScenario } from "@forkloop/cli/testing";
import { TEST_SERVER_PATH } from "@forkloop/mcp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolCall as call, resultText, toolResults } from "./support/sim-tool-results.js";

// R-M1 "close them with the session", through the BUILT binary: a stdio server behind
// a wrapper (`sh -c`, as `npx` and `uvx` start servers) that keeps running once its stdin ends —
// as servers holding a browser, a pool or a timer do. The SDK ends only the wrapper it spawned.

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-cli-mcp-end-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const config = JSON.stringify({
  mcpServers: {
    wrapped: { command: "sh", args: ["-c", `"${process.execPath}" "${TEST_SERVER_PATH}" --linger; exit $?`] },
  },
});

const step = (turn: number, ...content: Record<string, unknown>[]) => ({
  match: { querySource: "sdk", turn },
  reply: { content },
});

/** Alive: in /proc and not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}`)) return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/** Waits for `pid` to end (it may take the SIGTERM grace); false if it is still running after 10 s. */
async function ended(pid: number): Promise<boolean> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (!alive(pid)) return true;
    await sleep(50);
  }
  return false;
}

describe("R-M1: no MCP server process outlives the session (built CLI)", () => {
  it("R-M1: a run's end closes a wrapped stdio server that ignores the end of its stdin — the server process itself ends, not only its wrapper", async () => {
    const dir = await mkdtemp(join(root, "end-"));
    const scenario = await writeScenario(
      join(dir, "scenario.json"),
      [step(0, call("toolu_pid", "mcp__wrapped__pid")), step(1, { type: "text", text: "Got the pid." })],
      "(unscripted)",
    );
    await withSimProcess(dir, ["--scenario", scenario], async (sim) => {
      const run = await runCli(["run", "pid?", "--mcp-config", config], { cwd: dir, env: sim.env });
      expect(run.code, run.stderr).toBe(0);
      const results = toolResults((await sim.requests()).filter((record) => record.path === "/v1/messages"));
      const pid = Number(resultText(results.get("toolu_pid")));
      expect(pid).toBeGreaterThan(0);
      expect(await ended(pid)).toBe(true);
    });
  });

  it("R-M1: a second Ctrl+C (exit at once) in the middle of an MCP call still ends the wrapped server", async () => {
    const dir = await mkdtemp(join(root, "sigint-"));
    const scenario = await writeScenario(
      join(dir, "scenario.json"),
      [
        step(0, call("toolu_pid", "mcp__wrapped__pid")),
        step(1, call("toolu_slow", "mcp__wrapped__slow", { ms: 60_000 })),
      ],
      "(unscripted)",
    );
    await withSimProcess(dir, ["--scenario", scenario], async (sim) => {
      const run = startCli(
        ["run", "pid, then wait", "--mcp-config", config, "--allowed-tools", "mcp__wrapped"],
        {
          cwd: dir,
          env: sim.env,
        },
      );
      let pid = 0;
      for (let attempt = 0; attempt < 400 && pid === 0; attempt++) {
        const records = (await sim.requests()).filter((record) => record.path === "/v1/messages");
        if (records.length >= 2) pid = Number(resultText(toolResults(records).get("toolu_pid")));
        else await sleep(50);
      }
      expect(pid).toBeGreaterThan(0);
      await sleep(300); // the slow call is under way
      run.child.kill("SIGINT");
      await sleep(500); // a second Ctrl+C after the repeat window exits at once
      run.child.kill("SIGINT");
      const result = await run.exited;
      expect(result.code, result.stderr).toBe(130);
      expect(await ended(pid)).toBe(true);
    });
  });

  it("R-M1: SIGTERM while a server is still starting: the start gives up at once (not after MCP_TIMEOUT), no model request is made, exit 143, the server process ended", async () => {
    const dir = await mkdtemp(join(root, "starting-"));
    const peers = await mkdtemp(join(root, "peers-"));
    // `--peers DIR:2` alone never answers initialize; its file in DIR names its pid.
    const starting = JSON.stringify({
      mcpServers: {
        starting: { command: process.execPath, args: [TEST_SERVER_PATH, "--peers", `${peers}:2`] },
      },
    });
    await withSimProcess(dir, [], async (sim) => {
      const run = startCli(["run", "hi", "--output-format", "stream-json", "--mcp-config", starting], {
        cwd: dir,
        env: { ...sim.env, MCP_TIMEOUT: "25000" },
      });
      let pid = 0;
      for (let attempt = 0; attempt < 400 && pid === 0; attempt++) {
        pid = Number(readdirSync(peers)[0] ?? 0);
        if (pid === 0) await sleep(50);
      }
      expect(pid).toBeGreaterThan(0);
      run.child.kill("SIGTERM");
      const result = await run.exited;
      expect(result.code, result.stderr).toBe(143);
      expect(result.stderr).toContain('MCP server "starting" failed: its start was stopped');
      expect((await sim.requests()).filter((record) => record.path === "/v1/messages")).toEqual([]);
      expect(await ended(pid)).toBe(true);
    });
  });
});
