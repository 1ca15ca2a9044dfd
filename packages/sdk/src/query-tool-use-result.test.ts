import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import type { HookInput } from "./options.js";
import { query } from "./query.js";
import { collectMessages, startHarness } from "./test-support/sdk-harness.js";

// R-K2, R-X1: a tool call's structured output (Claude Code's toolUseResult) travels from the tool
// on the user message to the SDK's `tool_use_result` and to PostToolUse's `tool_response` — one
// object for both, as the Agent SDK gives them. Over the simulator, the real tools in a temp dir.
const CALLS = [
  { name: "Read", input: { file_path: "notes.md" } },
  { name: "Edit", input: { file_path: "notes.md", old_string: "version = 3", new_string: "version = 4" } },
  { name: "Bash", input: { command: "echo hi", description: "Print hi" } },
  { name: "Write", input: { file_path: "new.txt", content: "fresh\n" } },
  { name: "Read", input: { file_path: "missing.md" } },
];

/** The prompt whose calls the permission asker changes before allowing them. */
const CHANGED = "write and edit, changed on approval";
const CHANGED_CALLS = [
  { name: "Write", input: { file_path: "asked.txt", content: "proposed\n" } },
  { name: "Edit", input: { file_path: "asked.txt", old_string: "approved", new_string: "proposed" } },
];

function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource !== "sdk") return undefined;
  const calls = JSON.stringify(request.body.messages[0]?.content ?? "").includes(CHANGED)
    ? CHANGED_CALLS
    : CALLS;
  // One call per turn, in order: the turn's index is the next call's.
  const call = calls[request.turnIndex];
  if (call === undefined) return { content: [{ type: "text", text: "done" }] };
  return { content: [{ type: "tool_use", name: call.name, input: call.input }] };
}

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => harness?.close());

describe("R-K2, R-X1: structured tool results", () => {
  it("R-K2, R-X1: tool_use_result is each tool's own output, the same object PostToolUse gets as tool_response", async () => {
    const responses: unknown[] = [];
    const messages: SDKMessage[] = await collectMessages(
      query({
        prompt: "go",
        options: harness.options({
          permissionMode: "bypassPermissions",
          allowDangerouslySkipPermissions: true,
          hooks: {
            PostToolUse: [
              {
                hooks: [
                  async (input: HookInput) => {
                    responses.push((input as { tool_response?: unknown }).tool_response);
                    return {};
                  },
                ],
              },
            ],
          },
        }),
      }),
    );
    const results = messages.flatMap((message) =>
      message.type === "user" && "tool_use_result" in message ? [message.tool_use_result] : [],
    );
    const notes = `${harness.dir}/notes.md`;
    expect(results).toEqual([
      {
        type: "text",
        file: {
          filePath: notes,
          content: "# Release notes\nexport const version = 3;\n",
          numLines: 3,
          startLine: 1,
          totalLines: 3,
        },
      },
      {
        filePath: notes,
        oldString: "version = 3",
        newString: "version = 4",
        originalFile: "# Release notes\nexport const version = 3;\n",
        structuredPatch: [
          {
            oldStart: 1,
            oldLines: 2,
            newStart: 1,
            newLines: 2,
            lines: [" # Release notes", "-export const version = 3;", "+export const version = 4;"],
          },
        ],
        userModified: false,
        replaceAll: false,
      },
      { stdout: "hi", stderr: "", interrupted: false, isImage: false, noOutputExpected: false },
      {
        type: "create",
        filePath: `${harness.dir}/new.txt`,
        content: "fresh\n",
        structuredPatch: [],
        originalFile: null,
        userModified: false,
      },
      `Error: File does not exist. Note: your current working directory is ${harness.dir}.`,
    ]);
    // The failed Read is a PostToolUseFailure; every other call's tool_response is its tool_use_result.
    expect(responses).toEqual(results.slice(0, 4));
  });

  it("R-X1: a call the permission asker changed before allowing it is userModified, and its result says so in Claude Code's words", async () => {
    const messages: SDKMessage[] = await collectMessages(
      query({
        prompt: CHANGED,
        options: harness.options({
          canUseTool: async (name, input) => ({
            behavior: "allow",
            updatedInput:
              name === "Write"
                ? { ...input, content: "approved\n" }
                : { ...input, new_string: "approved, edited" },
          }),
        }),
      }),
    );
    const results = messages.flatMap((message) =>
      message.type === "user" && message.tool_use_result !== undefined ? [message] : [],
    );
    const path = `${harness.dir}/asked.txt`;
    expect(
      results.map((message) => (message.tool_use_result as { userModified?: boolean }).userModified),
    ).toEqual([true, true]);
    expect(
      results.map((message) => (message.message.content as { content?: unknown }[])[0]?.content),
    ).toEqual([
      `File created successfully at: ${path} The user modified your proposed content before accepting it.`,
      `The file ${path} has been updated successfully.  The user modified your proposed changes before accepting them. .`,
    ]);
  });
});
