import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage, SDKResultMessage } from "./messages.js";
import type { HookInput } from "./options.js";
import { runQuery, startHarness } from "./test-support/sdk-harness.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;
let harness: Harness;

/** One Write of out.txt (by its absolute path, as Claude Code's model gives it), then a text. */
function brain(request: BrainRequest) {
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text" as const, text: "done" }] };
  const file_path = join(harness.dir, "out.txt");
  return { content: [{ type: "tool_use" as const, name: "Write", input: { file_path, content: "hi\n" } }] };
}

beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => {
  await harness.close();
});

const outFile = () => join(harness.dir, "out.txt");
const toolResultOf = (messages: readonly SDKMessage[]) =>
  JSON.stringify(messages.find((message) => message.type === "user"));
const denialsOf = (messages: readonly SDKMessage[]) =>
  (messages.at(-1) as SDKResultMessage).permission_denials.map((denial) => denial.tool_name);

/** A settings PermissionRequest command hook that records its stdin and answers `answer` (JSON, or nothing). */
function settingsWithHook(answer: object | undefined): Record<string, unknown> {
  const log = join(harness.dir, "permission-request.json");
  const reply = answer === undefined ? "" : `; printf '%s' '${JSON.stringify(answer)}'`;
  return {
    hooks: {
      PermissionRequest: [
        { matcher: "Write", hooks: [{ type: "command", command: `cat > '${log}'${reply}` }] },
      ],
    },
  };
}

const decision = (value: object) => ({
  hookSpecificOutput: { hookEventName: "PermissionRequest", decision: value },
});

describe("PermissionRequest with nobody to ask (default mode, no canUseTool)", () => {
  it("R-X1: a settings PermissionRequest hook fires before the denial with tool_name, tool_input and permission_suggestions; its allow runs the call, its deny's message is the result, no answer leaves Claude Code's denial", async () => {
    const log = join(harness.dir, "permission-request.json");
    const silent = await runQuery(
      "Create out.txt",
      harness.options({ settings: settingsWithHook(undefined) }),
    );
    expect(JSON.parse(readFileSync(log, "utf8"))).toMatchObject({
      hook_event_name: "PermissionRequest",
      permission_mode: "default",
      cwd: harness.dir,
      tool_name: "Write",
      tool_input: { file_path: outFile(), content: "hi\n" },
      permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
    });
    expect(toolResultOf(silent)).toContain(
      `Claude requested permissions to write to ${outFile()}, but you haven't granted it yet.`,
    );
    expect(denialsOf(silent)).toEqual(["Write"]);
    expect(existsSync(outFile())).toBe(false);

    const allowed = await runQuery(
      "Create out.txt",
      harness.options({ settings: settingsWithHook(decision({ behavior: "allow" })) }),
    );
    expect(denialsOf(allowed)).toEqual([]);
    expect(readFileSync(outFile(), "utf8")).toBe("hi\n");
    rmSync(outFile());

    const denied = await runQuery(
      "Create out.txt",
      harness.options({ settings: settingsWithHook(decision({ behavior: "deny", message: "not in CI" })) }),
    );
    expect(toolResultOf(denied)).toContain("not in CI");
    expect(denialsOf(denied)).toEqual(["Write"]);
    expect(existsSync(outFile())).toBe(false);
  });

  it("R-K2, R-X1: the hooks option's PermissionRequest callbacks see the same input with nobody to ask; an allow runs the call, no answer is Claude Code's denial", async () => {
    const run = async (answer: "allow" | undefined) => {
      const inputs: HookInput[] = [];
      const messages = await runQuery(
        "Create out.txt",
        harness.options({
          hooks: {
            PermissionRequest: [
              {
                hooks: [
                  async (input) => {
                    inputs.push(input);
                    if (answer === undefined) return {};
                    return {
                      hookSpecificOutput: {
                        hookEventName: "PermissionRequest" as const,
                        decision: { behavior: "allow" as const },
                      },
                    };
                  },
                ],
              },
            ],
          },
        }),
      );
      return { inputs, messages };
    };
    const open = await run(undefined);
    expect(open.inputs).toEqual([
      expect.objectContaining({
        hook_event_name: "PermissionRequest",
        permission_mode: "default",
        tool_name: "Write",
        tool_input: { file_path: outFile(), content: "hi\n" },
        permission_suggestions: [{ type: "setMode", mode: "acceptEdits", destination: "session" }],
      }),
    ]);
    expect(toolResultOf(open.messages)).toContain(
      `Claude requested permissions to write to ${outFile()}, but you haven't granted it yet.`,
    );
    expect(denialsOf(open.messages)).toEqual(["Write"]);
    const allowed = await run("allow");
    expect(denialsOf(allowed.messages)).toEqual([]);
    expect(existsSync(outFile())).toBe(true);
    rmSync(outFile());
  });

  it("R-X1: without any PermissionRequest hook a call nobody can approve is denied in Claude Code's words", async () => {
    const messages = await runQuery("Create out.txt", harness.options());
    expect(toolResultOf(messages)).toContain(
      `Claude requested permissions to write to ${outFile()}, but you haven't granted it yet.`,
    );
    expect(denialsOf(messages)).toEqual(["Write"]);
  });
});
