import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { createSettingsHooks, EMPTY_SETTINGS, type HookSettings, type Settings } from "@forkloop/tools";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { AgentPool } from "./agent-pool.js";
import { createSession } from "./main-session.js";
import type { SubAgentEvent, SubAgentTask } from "./sub-agent-types.js";
import {
  namedTask,
  runToEnd,
  type SessionRig,
  startSessionRig,
  testProfile,
  testSessionOptions,
  toolResultTexts,
} from "./testing/index.js";

/** The fork's own instruction names the sub-agent: `Sub-agent <id>: …`. */
function agentOf(text: string | null): string {
  return /Sub-agent (\S+):/.exec(text ?? "")?.[1] ?? "?";
}

const brain: Brain = (request) => {
  const source = request.querySource ?? "";
  if (source === "agent:general-purpose") {
    // A sub-agent of the session: its first report, then another after SubagentStop's reason.
    if (request.lastUserText?.includes("check the docs too"))
      return { content: [{ type: "text", text: "report after the hook" }] };
    return { content: [{ type: "text", text: "first report" }] };
  }
  if (source === "sdk") {
    if (request.lastToolResults.length > 0)
      return { content: [{ type: "text", text: `parent got: ${request.lastToolResults[0]?.content}` }] };
    return {
      content: [{ type: "tool_use", name: "Agent", input: { description: "scan", prompt: "Scan it." } }],
    };
  }
  if (request.lastToolResults.length > 0) {
    return { content: [{ type: "text", text: `done: ${request.lastToolResults[0]?.content ?? ""}` }] };
  }
  const agent = agentOf(request.lastUserText);
  if (agent.startsWith("refused")) return { content: [], fault: "400" };
  if (agent.startsWith("grepper")) {
    return { content: [{ type: "tool_use", name: "Grep", input: { pattern: "SECRET", path: "." } }] };
  }
  if (agent.startsWith("basher")) {
    return {
      content: [
        { type: "tool_use", name: "Bash", input: { command: `touch ran-${agent}`, description: "touch" } },
      ],
    };
  }
  return { content: [{ type: "text", text: `${agent} done` }] };
};

let sim: Simulator;
let pool: AgentPool;
let dir: string;

let rig: SessionRig<Simulator>;
beforeAll(async () => {
  rig = await startSessionRig(startSimulator({ brain }), "guards");
  ({ sim, pool, dir } = rig);
  writeFileSync(join(dir, ".env"), "SECRET=hunter2\n");
  writeFileSync(join(dir, "notes.txt"), "SECRET is read from .env\n");
});
afterAll(() => rig.close());
afterEach(() => sim.clearRequests());

function settingsWith(hooks: HookSettings): Settings {
  return { ...EMPTY_SETTINGS, hooks };
}

const task = (id: string, extra: Partial<SubAgentTask> = {}) => namedTask(dir, id, extra);

describe("sub-agents keep the session's guards", () => {
  it("R-P1: a sub-agent's Grep leaves out files a deny rule hides (in the worker's tools)", async () => {
    const results: string[] = [];
    const outcome = await pool.run(
      task("grepper1", {
        profile: testProfile({
          permissionMode: "default",
          permissionRules: { allow: ["Grep"], ask: [], deny: ["Read(./.env)"] },
        }),
      }),
      {
        onEvent: (event: SubAgentEvent) => {
          if (event.type === "tool_result") results.push(event.content);
        },
      },
    ).result;
    expect(outcome.status).toBe("completed");
    expect(results).toHaveLength(1);
    expect(results[0]).toContain("notes.txt");
    expect(results[0]).not.toContain(".env");
    expect(sim.requests().at(-1)?.rawBody).not.toContain(".env\\n");
  });

  it("R-K2, R-F2: a sub-agent whose request the API refuses (400) runs the parent's StopFailure hooks over comlink (its agent id, the error as its message shows it), not its Stop hooks", async () => {
    const failures: { agentId: string | undefined; status: number | null; text: string }[] = [];
    const stops: string[] = [];
    const outcome = await pool.run(task("refused1"), {
      hooks: {
        stopFailure: [
          async ({ apiError, text, context }) => {
            failures.push({ agentId: context.agentId, status: apiError.status, text });
            return {};
          },
        ],
        stop: [
          async ({ context }) => {
            stops.push(context.agentId ?? "?");
            return {};
          },
        ],
      },
    }).result;
    expect(outcome.status).toBe("failed");
    expect(failures).toEqual([
      { agentId: "refused1", status: 400, text: expect.stringMatching(/^API Error: 400 \S/) },
    ]);
    expect(stops).toEqual([]);
  });

  it("R-F2: a blocking PreToolUse settings hook passed to runAll denies a pooled sub-agent's tool", async () => {
    const hooks = createSettingsHooks(
      settingsWith({
        PreToolUse: [
          {
            matcher: "Bash",
            hooks: [{ type: "command", command: "echo 'no shell in this batch' >&2; exit 2" }],
          },
        ],
      }),
      { cwd: dir, sessionId: "batch-test" },
    );
    const handles = pool.runAll([task("basher1"), task("basher2")], { hooks }, { warm: true });
    const results = await Promise.all(handles.map((handle) => handle.result));
    for (const [index, result] of results.entries()) {
      expect(result.status).toBe("completed");
      expect(result.text).toContain("no shell in this batch");
      expect(existsSync(join(dir, `ran-basher${index + 1}`))).toBe(false);
    }
  });

  it("R-L15/R-F1: a sub-agent's stop fires SubagentStop (not Stop); a blocking answer makes it continue", async () => {
    const subagentLog = join(dir, "subagent-stop.log");
    const stopLog = join(dir, "stop.log");
    // Logs its stdin; blocks the first stop (stop_hook_active false) with a reason on stderr.
    const subagentStop =
      `input=$(cat); printf '%s\\n' "$input" >> '${subagentLog}'; ` +
      `case "$input" in *'"stop_hook_active":false'*) echo 'check the docs too' >&2; exit 2;; esac`;
    const sessionsDir = join(dir, "sessions");
    const sessionId = "s-subagent-stop";
    const session = await createSession({
      ...testSessionOptions({ baseURL: sim.url, dir, pool }),
      sessionsDir,
      resumeSessionId: sessionId,
      hooks: createSettingsHooks(
        settingsWith({
          SubagentStop: [{ hooks: [{ type: "command", command: subagentStop }] }],
          Stop: [{ hooks: [{ type: "command", command: `cat >> '${stopLog}'; echo >> '${stopLog}'` }] }],
        }),
        { cwd: dir, sessionId, transcriptPath: session_path(sessionsDir, sessionId) },
      ),
    });
    const terminal = await runToEnd(session.run("Look at the repository."));
    await session.close();

    expect(terminal.reason).toBe("completed");
    expect(toolResultTexts(terminal.messages)[0]).toContain("report after the hook");
    const calls = readFileSync(subagentLog, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    // Claude Code's SubagentStop input; R-L15: the hook is not run again on the retry it caused.
    expect(calls).toEqual([
      {
        session_id: sessionId,
        transcript_path: session_path(sessionsDir, sessionId),
        cwd: dir,
        hook_event_name: "SubagentStop",
        permission_mode: "bypassPermissions",
        stop_hook_active: false,
        // R-X4: Claude Code's SubagentStop also names the sub-agent and its last reply.
        agent_id: expect.stringMatching(/^agent-/),
        agent_transcript_path: "",
        last_assistant_message: expect.any(String),
        // Claude Code 2.1.332's: what still runs in the background; forkloop schedules no crons.
        background_tasks: [],
        session_crons: [],
      },
    ]);
    // The main agent's own stop is a Stop event, once.
    const stops = readFileSync(stopLog, "utf8").trim().split("\n");
    expect(stops.map((line) => (JSON.parse(line) as { hook_event_name: string }).hook_event_name)).toEqual([
      "Stop",
    ]);
  });
});

function session_path(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, `${sessionId}.fltr`);
}
