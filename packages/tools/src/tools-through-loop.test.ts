import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { createUserMessage, type PermissionMode, query } from "@forkloop/loop-core";
import { collect } from "@forkloop/loop-core/testing";
import { type BrainRequest, type Simulator, startSimulator } from "@forkloop/sim";
import { sequenceBrain } from "@forkloop/sim/testing";
import { afterEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "./builtin-tools.js";
import { createSettingsHooks } from "./hooks/settings-hooks.js";
import { createPermissionChecker, type PermissionDenial } from "./permissions/permission-checker.js";
import type { Settings } from "./settings/settings-schema.js";
import { useTempWorkspace } from "./testing/index.js";

/**
 * The tools, permissions and shell hooks driven by loop-core's real query() against the
 * simulator over HTTP with the official SDK: what the model sees in its next request is the proof.
 */
const ws = useTempWorkspace();
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

async function runAgent(options: {
  replies: Parameters<typeof sequenceBrain>[0];
  mode: PermissionMode;
  settings?: Settings;
}) {
  const brain = sequenceBrain(options.replies);
  sim = await startSimulator({ brain });
  const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
  const tools = createBuiltinTools();
  const settings = options.settings ?? { permissions: { allow: [], ask: [], deny: [] }, hooks: {} };
  const denials: PermissionDenial[] = [];
  const context = {
    ...ws.context({ tools }),
    options: { model: "claude-sonnet-4-6", permissionMode: options.mode },
  };
  const { terminal } = await collect(
    query({
      messages: [createUserMessage("Do the task.")],
      systemPrompt: "You are a test agent.",
      toolUseContext: context,
      querySource: "sdk",
      client,
      canUseTool: createPermissionChecker({
        mode: options.mode,
        rules: settings.permissions,
        tools,
        cwd: ws.root,
        onDenial: (denial) => denials.push(denial),
      }),
      hooks: createSettingsHooks(settings, { cwd: ws.root, sessionId: "s1" }),
      maxTurns: 5,
    }),
  );
  return { terminal, denials, seen: brain.seen as BrainRequest[] };
}

const toolUse = (name: string, input: Record<string, unknown>, id: string) => ({
  type: "tool_use" as const,
  name,
  input,
  id,
});
const done = [{ type: "text" as const, text: "Finished." }];

describe("tools through the loop and the simulator", () => {
  it("R-T3: Read then Edit round-trips through the model; results reach the next request", async () => {
    writeFileSync(join(ws.root, "app.ts"), "const answer = 41;\n");
    const { terminal, seen } = await runAgent({
      mode: "acceptEdits",
      replies: [
        [toolUse("Read", { file_path: "app.ts" }, "toolu_read")],
        [toolUse("Edit", { file_path: "app.ts", old_string: "41", new_string: "42" }, "toolu_edit")],
        done,
      ],
    });
    expect(terminal.reason).toBe("completed");
    expect(readFileSync(join(ws.root, "app.ts"), "utf8")).toBe("const answer = 42;\n");
    expect(seen[1]?.lastToolResults).toEqual([
      { tool_use_id: "toolu_read", content: "1\tconst answer = 41;\n2\t", is_error: false },
    ]);
    expect(seen[2]?.lastToolResults[0]?.content).toMatch(/has been updated/);
    expect([...(seen[0]?.toolNames ?? [])].sort()).toEqual([
      "Bash",
      "Edit",
      "Glob",
      "Grep",
      "LS",
      "NotebookEdit",
      "Read",
      "TaskStop",
      "TodoWrite",
      "WebFetch",
      "WebSearch",
      "Write",
    ]);
  });

  it("R-T3: an image read by Read is accepted by the API as an image block in the tool_result", async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(64),
    ]);
    writeFileSync(join(ws.root, "shot.png"), png);
    const { terminal, seen } = await runAgent({
      mode: "default",
      replies: [[toolUse("Read", { file_path: "shot.png" }, "toolu_img")], done],
    });
    expect(terminal.reason).toBe("completed");
    const sent = seen[1]?.body.messages.at(-1)?.content;
    expect(JSON.stringify(sent)).toContain('"media_type":"image/png"');
  });

  it("R-P1: in default mode with no approver a Write is denied, recorded, and the model is told why", async () => {
    const { terminal, denials, seen } = await runAgent({
      mode: "default",
      replies: [[toolUse("Write", { file_path: "new.txt", content: "x" }, "toolu_write")], done],
    });
    expect(terminal.reason).toBe("completed");
    expect(existsSync(join(ws.root, "new.txt"))).toBe(false);
    expect(denials.map((denial) => denial.toolName)).toEqual(["Write"]);
    expect(seen[1]?.lastToolResults[0]).toMatchObject({ tool_use_id: "toolu_write", is_error: true });
    expect(seen[1]?.lastToolResults[0]?.content).toBe(
      `Claude requested permissions to write to ${join(ws.root, "new.txt")}, but you haven't granted it yet.`,
    );
  });

  it("R-T1, R-X1: a PreToolUse shell hook (exit 2) blocks Bash before it runs, its stderr in Claude Code's words", async () => {
    const settings: Settings = {
      permissions: { allow: [], ask: [], deny: [] },
      hooks: {
        PreToolUse: [
          { matcher: "Bash", hooks: [{ type: "command", command: "echo 'rm is not allowed' >&2; exit 2" }] },
        ],
      },
    };
    const { seen } = await runAgent({
      mode: "bypassPermissions",
      settings,
      replies: [[toolUse("Bash", { command: "touch ran.txt" }, "toolu_bash")], done],
    });
    expect(existsSync(join(ws.root, "ran.txt"))).toBe(false);
    expect(seen[1]?.lastToolResults[0]).toMatchObject({ tool_use_id: "toolu_bash", is_error: true });
    expect(seen[1]?.lastToolResults[0]?.content).toBe(
      "PreToolUse:Bash hook error: [echo 'rm is not allowed' >&2; exit 2]: rm is not allowed\n",
    );
  });
});
