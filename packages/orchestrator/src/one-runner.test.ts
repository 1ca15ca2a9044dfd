import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openingEvent } from "./agent-runner.js";

// R-A1: the main session and every worker agent run on the one agent runner (agent-runner.ts);
// their two hosts only adapt it. What they still did alike moved into it, and concerns that are not
// the runner's live in modules named for them (the session's start point, opening, pipeline; a
// worker's shells and spending), so the hosts stay at most half of the 1,068 lines the two
// runners had before they shared one.
const HOSTS = ["main-session.ts", "sub-agent-runner.ts"];
const MAX_HOST_LINES = 1_068 / 2;

const source = (file: string) => readFileSync(join(import.meta.dirname, file), "utf8");

describe("R-A1 the one agent runner", () => {
  it("both hosts drive their turns through the shared runner, together at most half of the two runners' old size", () => {
    for (const host of HOSTS)
      expect([host, source(host)]).toEqual([host, expect.stringMatching(/\brunTurn\(/)]);
    const lines = HOSTS.map((host) => source(host).split("\n").length - 1);
    expect(lines.reduce((sum, count) => sum + count, 0)).toBeLessThanOrEqual(MAX_HOST_LINES);
  });
});

describe("R-X1 how a worker agent opens (openingEvent, the rule its host waits on)", () => {
  it("an Agent or Skill sub-agent with SubagentStart, a batch item with SessionStart, a continuation and compaction's own forks with neither", () => {
    expect(openingEvent({ querySource: "agent:reviewer" })).toBe("SubagentStart");
    expect(openingEvent({ querySource: "skill:fix" })).toBe("SubagentStart");
    expect(openingEvent({ querySource: "batch", startsSession: true })).toBe("SessionStart");
    expect(openingEvent({ querySource: "agent:reviewer", continues: true })).toBeUndefined();
    expect(openingEvent({ querySource: "compact" })).toBeUndefined();
    expect(openingEvent({ querySource: "session_memory" })).toBeUndefined();
  });
});
