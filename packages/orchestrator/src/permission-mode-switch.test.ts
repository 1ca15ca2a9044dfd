import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoopHooks } from "@forkloop/loop-core";
import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AgentPool, createAgentPool } from "./agent-pool.js";
import { createPermissionModeCell, writePermissionMode } from "./permission-mode-cell.js";
import type { SubAgentEvent } from "./sub-agent-types.js";
import { namedTask, testProfile } from "./testing/index.js";

/**
 * R-S14: a mode switched during a turn reaches a sub-agent already running in its worker thread.
 * The sub-agent (real worker, the simulator over HTTP) writes first.txt, then second.txt; a
 * PostToolUse hook (it runs in the parent, and the worker waits for its answer) switches the mode
 * to plan after the first write. Needs `npm run build` (the pool loads the built worker).
 */
let dir: string;
const brain: Brain = (request) => {
  const last = request.lastToolResults[0]?.content ?? "";
  const write = (name: string) => ({
    content: [
      {
        type: "tool_use" as const,
        name: "Write",
        input: { file_path: join(dir, name), content: `${name}\n` },
      },
    ],
  });
  if (request.lastToolResults.length === 0) return write("first.txt");
  if (last.includes("first.txt")) return write("second.txt");
  return { content: [{ type: "text", text: `done: ${last}` }] };
};

let sim: Simulator;
let pool: AgentPool;
beforeAll(async () => {
  sim = await startSimulator({ brain });
  pool = createAgentPool({ endpoint: { apiKey: "test-key", baseURL: sim.url }, maxThreads: 1 });
});
afterAll(async () => {
  await pool.close();
  await sim.close();
});

/** Runs the two-write sub-agent in acceptEdits; the hook switches to plan after its first write. */
async function runSwitchedToPlan(shareLiveMode: boolean) {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-mode-switch-")));
  const cell = createPermissionModeCell("acceptEdits");
  const hooks: LoopHooks = {
    postToolUse: [
      async () => {
        writePermissionMode(cell, "plan"); // what query().setPermissionMode("plan") does
        return {};
      },
    ],
  };
  const results: string[] = [];
  const outcome = await pool.run(
    namedTask(dir, "writer", {
      profile: testProfile({ permissionMode: "acceptEdits" }),
      toolNames: ["Write"],
      ...(shareLiveMode ? { permissionModeCell: cell } : {}),
    }),
    {
      hooks,
      onEvent: (event: SubAgentEvent) => {
        if (event.type === "tool_result") results.push(event.content);
      },
    },
  ).result;
  const written = { first: existsSync(join(dir, "first.txt")), second: existsSync(join(dir, "second.txt")) };
  rmSync(dir, { recursive: true, force: true });
  return { outcome, results, written };
}

describe("R-S14: permission modes reach running sub-agents", () => {
  it("R-S14: switched to plan mid-turn, a running sub-agent's next write is denied (real worker thread)", async () => {
    const { outcome, results, written } = await runSwitchedToPlan(true);
    expect(outcome.status).toBe("completed");
    expect(written).toEqual({ first: true, second: false });
    expect(results[1]).toMatch(/plan/i);
  });

  it("R-S14 control: with the mode copied at fork time (before), the same write goes through", async () => {
    const { written } = await runSwitchedToPlan(false);
    expect(written).toEqual({ first: true, second: true });
  });
});
