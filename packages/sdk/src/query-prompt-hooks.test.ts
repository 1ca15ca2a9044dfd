import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { HookInput } from "./options.js";
import { query } from "./query.js";
import { runQuery, runToThrow, startHarness } from "./test-support/sdk-harness.js";

// R-X1, R-K2: the hooks of a session's start and of a prompt typed as a command, as Claude Code
// fires them: InstructionsLoaded once per memory file after SessionStart, in load order;
// UserPromptSubmit with the prompt as typed, then UserPromptExpansion with the command's facts.
let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(() => ({ content: [{ type: "text" as const, text: "Reviewed." }] }));
  mkdirSync(join(harness.dir, "docs"), { recursive: true });
  writeFileSync(join(harness.dir, "CLAUDE.md"), "# Project\nSee @docs/codename.md for the codename.\n");
  writeFileSync(join(harness.dir, "docs", "codename.md"), "The codename is SILVER-FOX-5.\n");
});
afterAll(async () => {
  await harness.close();
});

const EXPANSION = {
  expansionType: "slash_command" as const,
  typedPrompt: "/review notes.md",
  commandName: "review",
  commandArgs: "notes.md",
  commandSource: "projectSettings",
};

function recorder() {
  const seen: HookInput[] = [];
  const record = (answer: Record<string, unknown> = {}) => [
    {
      hooks: [
        async (input: HookInput) => {
          seen.push(input);
          return answer;
        },
      ],
    },
  ];
  return { seen, record };
}

describe("R-X1: prompt and instructions hooks through query()", () => {
  it("R-X1, R-K2: InstructionsLoaded fires per memory file after SessionStart (CLAUDE.md session_start, its import include); UserPromptSubmit sees the command as typed, then UserPromptExpansion fires with its facts — the model gets the expansion", async () => {
    const { seen, record } = recorder();
    const before = harness.sim.requests().length;
    await runQuery(
      "Review notes.md for tone.",
      harness.options({
        promptExpansion: EXPANSION,
        hooks: {
          SessionStart: record(),
          InstructionsLoaded: record(),
          UserPromptSubmit: record(),
          UserPromptExpansion: record({
            hookSpecificOutput: {
              hookEventName: "UserPromptExpansion",
              additionalContext: "EXPANSION-NOTE-7",
            },
          }),
        },
      }),
    );
    expect(seen.map((input) => input.hook_event_name)).toEqual([
      "SessionStart",
      "InstructionsLoaded",
      "InstructionsLoaded",
      "UserPromptSubmit",
      "UserPromptExpansion",
    ]);
    const [, claudeMd, imported, submitted, expanded] = seen;
    expect(claudeMd).toMatchObject({
      file_path: join(harness.dir, "CLAUDE.md"),
      memory_type: "Project",
      load_reason: "session_start",
    });
    expect(claudeMd).not.toHaveProperty("parent_file_path");
    // Before the first prompt: no prompt id, as in Claude Code.
    expect(claudeMd).not.toHaveProperty("prompt_id");
    expect(imported).toMatchObject({
      file_path: join(harness.dir, "docs", "codename.md"),
      memory_type: "Project",
      load_reason: "include",
      parent_file_path: join(harness.dir, "CLAUDE.md"),
    });
    expect(submitted).toMatchObject({ prompt: "/review notes.md" });
    expect(expanded).toMatchObject({
      hook_event_name: "UserPromptExpansion",
      expansion_type: "slash_command",
      command_name: "review",
      command_args: "notes.md",
      command_source: "projectSettings",
      prompt: "/review notes.md",
      prompt_id: (submitted as { prompt_id?: string }).prompt_id,
      permission_mode: "default",
    });
    // The model is sent the expansion, and the expansion hook's context after it.
    const sent = JSON.stringify(JSON.parse(harness.sim.requests()[before]?.rawBody ?? "{}").messages);
    expect(sent).toContain("Review notes.md for tone.");
    expect(sent).not.toContain("/review notes.md");
    expect(sent).toContain("EXPANSION-NOTE-7");
  });

  it("R-X1: a UserPromptExpansion block drops the prompt (nothing is sent); without promptExpansion it does not fire and UserPromptSubmit sees the prompt given", async () => {
    const { seen, record } = recorder();
    const before = harness.sim.requests().length;
    const blocked = await runToThrow(
      query({
        prompt: "Review notes.md for tone.",
        options: harness.options({
          promptExpansion: EXPANSION,
          hooks: { UserPromptExpansion: record({ decision: "block", reason: "no reviews today" }) },
        }),
      }),
    );
    expect(JSON.stringify(blocked.messages.at(-1))).toContain(
      "a UserPromptExpansion hook blocked the prompt: no reviews today",
    );
    expect(harness.sim.requests().length).toBe(before);
    seen.length = 0;
    await runQuery(
      "Plain prompt.",
      harness.options({ hooks: { UserPromptSubmit: record(), UserPromptExpansion: record() } }),
    );
    expect(seen.map((input) => [input.hook_event_name, (input as { prompt?: string }).prompt])).toEqual([
      ["UserPromptSubmit", "Plain prompt."],
    ]);
  });
});
