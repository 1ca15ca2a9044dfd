import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testServerConfig } from "@forkloop/mcp/testing";
import type { BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { INVALID_PERMISSION_RESULT } from "./permission-prompt-tool.js";
import { query } from "./query.js";
import { runQuery, runToThrow, startHarness } from "./test-support/sdk-harness.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

// R-X3 `permissionPromptToolName` (`claude -p --permission-prompt-tool`): a real MCP server (the
// repo's test server, a stdio process) answers the permission prompts; the scripted model makes
// a Write (allowed with a changed input), a Bash call (denied) and an Edit (a reply that is not a
// permission result), one per turn.
let harness: Harness;
let logDir: string;
let bodies: { tools: { name: string }[] }[] = [];

function brain(request: BrainRequest) {
  if (request.querySource !== "sdk") return undefined;
  bodies.push(request.body as unknown as { tools: { name: string }[] });
  const work = harness.dir;
  const calls = [
    { name: "Write", input: { file_path: join(work, "out.txt"), content: "hi\n" } },
    { name: "Bash", input: { command: "touch made.txt", description: "Make a file" } },
    {
      name: "Edit",
      input: { file_path: join(work, "notes.md"), old_string: "Release", new_string: "Launch" },
    },
  ];
  const call = calls[request.turnIndex];
  if (call === undefined) return { content: [{ type: "text" as const, text: "Done." }] };
  return { content: [{ type: "tool_use" as const, id: `toolu_${call.name}`, ...call }] };
}

const approver = () =>
  testServerConfig(
    "--approver",
    JSON.stringify({
      log: logDir,
      replies: {
        Write: {
          behavior: "allow",
          updatedInput: { file_path: join(harness.dir, "out.txt"), content: "approved\n" },
        },
        Bash: { behavior: "deny", message: "No shell here." },
        Edit: "yes",
      },
    }),
  );

beforeAll(async () => {
  harness = await startHarness(brain);
  logDir = mkdtempSync(join(tmpdir(), "forkloop-approver-log-"));
});
afterAll(async () => {
  await harness?.close();
  rmSync(logDir, { recursive: true, force: true });
});

describe("R-X3: query()'s permissionPromptToolName — an MCP tool answers the permission prompts", () => {
  it("R-X3: the tool gets {tool_name, input, tool_use_id} for each prompt; allow runs its updatedInput, deny and a reply that is not a permission result deny; the tool is not offered to the model", async () => {
    bodies = [];
    const messages = await runQuery(
      "Create out.txt, make made.txt, then edit notes.md.",
      harness.options({ mcpServers: { perm: approver() }, permissionPromptToolName: "mcp__perm__approve" }),
    );
    const calls = readdirSync(logDir)
      .sort()
      .map((name) => JSON.parse(readFileSync(join(logDir, name), "utf8")) as Record<string, unknown>);
    expect(calls.map((call) => [call.tool_name, call.tool_use_id])).toEqual([
      ["Write", "toolu_Write"],
      ["Bash", "toolu_Bash"],
      ["Edit", "toolu_Edit"],
    ]);
    expect(calls[0]?.input).toEqual({ file_path: join(harness.dir, "out.txt"), content: "hi\n" });
    // allow: the tool's input, not the model's, ran.
    expect(readFileSync(join(harness.dir, "out.txt"), "utf8")).toBe("approved\n");
    expect(existsSync(join(harness.dir, "made.txt"))).toBe(false);
    expect(readFileSync(join(harness.dir, "notes.md"), "utf8")).toContain("Release");
    const results = JSON.stringify(messages.filter((message) => message.type === "user"));
    expect(results).toContain("No shell here.");
    expect(results).toContain(INVALID_PERMISSION_RESULT.slice(0, 60));
    const result = messages.find((message) => message.type === "result");
    expect(result?.type === "result" && result.permission_denials.map((denial) => denial.tool_name)).toEqual([
      "Bash",
      "Edit",
    ]);
    const offered = bodies[0]?.tools.map((tool) => tool.name) ?? [];
    expect(offered).toContain("mcp__perm__echo");
    expect(offered).not.toContain("mcp__perm__approve");
  });

  it('R-X3: permissionPrompts "none" (`--permission-prompts none`): neither the prompt tool nor canUseTool is asked, so every call that would prompt is denied', async () => {
    const logged = readdirSync(logDir).length;
    const messages = await runQuery(
      "Create out.txt, make made.txt, then edit notes.md.",
      harness.options({
        mcpServers: { perm: approver() },
        permissionPromptToolName: "mcp__perm__approve",
        permissionPrompts: "none",
      }),
    );
    expect(readdirSync(logDir).length).toBe(logged);
    const denied = (list: typeof messages) =>
      list.flatMap((message) =>
        message.type === "result" ? message.permission_denials.map((denial) => denial.tool_name) : [],
      );
    expect(denied(messages)).toEqual(["Write", "Bash", "Edit"]);
    let asked = 0;
    const unasked = await runQuery(
      "Create out.txt, make made.txt, then edit notes.md.",
      harness.options({
        permissionPrompts: "none",
        canUseTool: async () => {
          asked++;
          return { behavior: "allow" };
        },
      }),
    );
    expect(asked).toBe(0);
    expect(denied(unasked)).toEqual(["Write", "Bash", "Edit"]);
  });

  it("R-X3: a name no server offers, a built-in tool's name, or beside canUseTool is an OptionsError naming the fix, before any request", async () => {
    const before = harness.sim.requests().length;
    const unknown = await runToThrow(
      query({
        prompt: "hi",
        options: harness.options({
          mcpServers: { perm: approver() },
          permissionPromptToolName: "mcp__perm__nope",
        }),
      }),
    );
    expect(String(unknown.thrown)).toContain(
      "MCP tool mcp__perm__nope (passed via --permission-prompt-tool) not found. Available MCP tools: mcp__perm__echo",
    );
    expect(String(unknown.thrown)).toContain("mcp__perm__approve");
    const builtin = await runToThrow(
      query({ prompt: "hi", options: harness.options({ permissionPromptToolName: "Write" }) }),
    );
    expect(String(builtin.thrown)).toContain(
      "tool Write (passed via --permission-prompt-tool) must be an MCP tool",
    );
    const both = await runToThrow(
      query({
        prompt: "hi",
        options: harness.options({
          permissionPromptToolName: "mcp__perm__approve",
          canUseTool: async () => ({ behavior: "allow" }),
        }),
      }),
    );
    expect(String(both.thrown)).toContain("canUseTool callback cannot be used with permissionPromptToolName");
    expect(harness.sim.requests().length).toBe(before);
  });
});
