import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { LoopHooks, ModelInfo, ToolUseContext } from "@forkloop/loop-core";
import { type Brain, type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import {
  batchItemTask,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testProfile,
  testSessionOptions,
} from "./testing/index.js";

// Every agent runs on the one agent runner: the main session in-process, a sub-agent and a batch
// item in a worker thread (their hooks run in the parent). Each lifecycle hook must reach the
// caller's hooks with the same input fields, whichever agent fired it.

const MODEL = "claude-sonnet-4-6";
// A 28k window (sized for the tool definitions every request carries, WebSearch included) puts
// the auto-compact line under three part files, so every agent compacts.
const WINDOW: ModelInfo[] = [
  { id: MODEL, contextWindow: 28_000, maxOutputTokens: 2_000, inputPricePerMTok: 3, outputPricePerMTok: 15 },
];
const PARTS = 3;
const SUMMARY = "<summary>## Goal\nRead every part file in parts/ and report.</summary>";

/** Reads parts/part1..3 in turn, then `last` (the reply after the third part's result). */
function reading(request: Parameters<Brain>[0], last: ReturnType<Brain>): ReturnType<Brain> {
  // A task's own text starts its reading (a fork's first message also carries its parent's results).
  const result = request.lastUserText === null ? (request.lastToolResults[0]?.content ?? "") : "";
  for (let part = PARTS; part >= 1; part--) {
    if (!result.includes(`PART-${part} `)) continue;
    if (part === PARTS) return last;
    return {
      content: [{ type: "tool_use", name: "Read", input: { file_path: `parts/part${part + 1}.md` } }],
    };
  }
  return { content: [{ type: "tool_use", name: "Read", input: { file_path: "parts/part1.md" } }] };
}

const brain: Brain = (request) => {
  const source = request.querySource ?? "";
  if (source === "compact") return { content: [{ type: "text", text: SUMMARY }] };
  if (source === "sdk") {
    if (request.lastToolResults[0]?.content.includes("agent:general-purpose done"))
      return { content: [{ type: "text", text: "main done" }] };
    return reading(request, {
      content: [
        { type: "tool_use", name: "Agent", input: { description: "Audit", prompt: "Audit the parts." } },
      ],
    });
  }
  return reading(request, { content: [{ type: "text", text: `${source} done` }] });
};

type Kind = "main" | "sub-agent" | "batch item";
interface Seen {
  readonly event: string;
  readonly kind: Kind;
  /** The input's own fields (the context aside), sorted. */
  readonly fields: string;
  /** The context's fields and its options' fields, sorted. */
  readonly contextFields: string;
  readonly cwd: string;
  readonly workspaceRoots: readonly string[];
  readonly model: string;
}

let sim: Simulator;
let pool: AgentPool;
let dir: string;
const seen: Seen[] = [];

const kindOf = (agentId: string): Kind =>
  agentId === "main" ? "main" : agentId.startsWith("item-") ? "batch item" : "sub-agent";

/** A hook of every lifecycle event that records what it was given and has no opinion. */
function recording(event: string) {
  return async (input: { readonly context: ToolUseContext }) => {
    const { context, ...own } = input;
    seen.push({
      event,
      kind: kindOf(context.agentId),
      fields: Object.keys(own).sort().join(","),
      contextFields: `${Object.keys(context).sort().join(",")}|${Object.keys(context.options).sort().join(",")}`,
      cwd: context.cwd,
      workspaceRoots: context.workspaceRoots,
      model: context.options.model,
    });
    return {};
  };
}

const hooks: LoopHooks = {
  sessionStart: [recording("SessionStart")],
  userPromptSubmit: [recording("UserPromptSubmit")],
  preToolUse: [recording("PreToolUse")],
  postToolUse: [recording("PostToolUse")],
  stop: [recording("Stop")],
  preCompact: [recording("PreCompact")],
  postCompact: [recording("PostCompact")],
  subagentStart: [recording("SubagentStart")],
};

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "lifecycle");
  ({ sim, pool, dir } = rig);
  mkdirSync(join(dir, "parts"));
  for (let part = 1; part <= PARTS; part++) {
    const lines = Array.from({ length: 250 }, (_, i) => `line ${i} of part ${part}: alpha beta gamma delta`);
    writeFileSync(join(dir, "parts", `part${part}.md`), `PART-${part} begins here\n${lines.join("\n")}\n`);
  }
});
afterAll(() => rig.close());

describe("the one agent runner", () => {
  it("R-L15/R-F1, R-X1: each lifecycle hook (PostCompact too, from a worker) fires with the same input fields in a main session, a sub-agent and a batch item", async () => {
    const profile = testProfile({ model: MODEL, modelOverrides: WINDOW });
    const session = await createSession({
      ...testSessionOptions({ baseURL: sim.url, dir, pool }),
      profile,
      hooks,
    });
    const terminal = await runToEnd(session.run("Read every part file in parts/ and report."));
    expect(terminal.reason).toBe("completed");
    // A batch item: a session of its own in the pool, on the batch's shared prefix.
    const item = pool.run(batchItemTask(session, dir, "item-1-1", profile), { hooks });
    expect((await item.result).status).toBe("completed");
    await session.close();

    const events = [
      "SessionStart",
      "UserPromptSubmit",
      "SubagentStart",
      "PreToolUse",
      "PostToolUse",
      "PreCompact",
      "PostCompact",
      "Stop",
    ];
    const firedBy = (event: string) =>
      [...new Set(seen.filter((s) => s.event === event).map((s) => s.kind))].sort();
    // Where Claude Code fires each: a sub-agent opens with SubagentStart, not a session of its own
    // and no prompt; SessionStart reaches it as `compact` after its own compaction.
    expect(Object.fromEntries(events.map((event) => [event, firedBy(event)]))).toEqual({
      SessionStart: ["batch item", "main", "sub-agent"],
      UserPromptSubmit: ["batch item", "main"],
      SubagentStart: ["sub-agent"],
      PreToolUse: ["batch item", "main", "sub-agent"],
      PostToolUse: ["batch item", "main", "sub-agent"],
      PreCompact: ["batch item", "main", "sub-agent"],
      PostCompact: ["batch item", "main", "sub-agent"],
      Stop: ["batch item", "main", "sub-agent"],
    });
    for (const event of events) {
      const shapes = new Set(
        seen.filter((s) => s.event === event).map((s) => `${s.fields} / ${s.contextFields}`),
      );
      expect([event, [...shapes]]).toEqual([event, [[...shapes][0]]]);
    }
    // The same values where they are the same agent's: its directory, workspace and model.
    for (const s of seen) {
      expect({ event: s.event, kind: s.kind, cwd: s.cwd, roots: s.workspaceRoots, model: s.model }).toEqual({
        event: s.event,
        kind: s.kind,
        cwd: dir,
        roots: [dir],
        model: MODEL,
      });
    }
  }, 120_000);
});
