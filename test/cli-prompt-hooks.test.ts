import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X1, R-X4: a project written for Claude Code, its settings hooks logging their stdin: at the
// session's start InstructionsLoaded fires per memory file after SessionStart, in load order; a
// prompt typed as a custom command reaches UserPromptSubmit as typed, then UserPromptExpansion
// fires with the command's facts, while the model gets the command's prompt.
const hook = (log: string, extra = "") => [
  { hooks: [{ type: "command", command: `input=$(cat); printf '%s\\n' "$input" >> '${log}'${extra}` }] },
];
const project = useSimProject("prompt-hooks", async (dir) => {
  const log = join(dir, "hooks.jsonl");
  await mkdir(join(dir, ".claude", "commands"), { recursive: true });
  await mkdir(join(dir, "docs"), { recursive: true });
  await writeFile(join(dir, "notes.txt"), "hello there\n");
  await writeFile(join(dir, "CLAUDE.md"), "# Project\nSee @docs/codename.md for the codename.\n");
  await writeFile(join(dir, "docs", "codename.md"), "The codename is SILVER-FOX-5.\n");
  await writeFile(
    join(dir, ".claude", "commands", "review.md"),
    "---\ndescription: Review a file\n---\nSay in one word what $ARGUMENTS holds.\n",
  );
  await writeFile(
    join(dir, ".claude", "settings.json"),
    JSON.stringify({
      hooks: {
        SessionStart: hook(log),
        InstructionsLoaded: hook(log),
        UserPromptSubmit: hook(log),
        // Exit 2 blocks the prompt; its stderr is the reason.
        UserPromptExpansion: hook(
          log,
          `; case "$input" in *blocked*) echo 'no blocked reviews' >&2; exit 2;; esac`,
        ),
      },
    }),
  );
});
const log = () => join(project.dir, "hooks.jsonl");

type HookInput = Record<string, unknown> & { hook_event_name: string };
async function takeLog(): Promise<HookInput[]> {
  const text = await readFile(log(), "utf8").catch(() => "");
  await writeFile(log(), "");
  return text
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as HookInput);
}
const run = (prompt: string) =>
  runCliInProcess(["-p", prompt, "--trust-project", "--output-format", "json"], {
    cwd: project.dir,
    env: project.env(),
  });

describe("R-X1: prompt and instructions hooks of forkloop -p, as Claude Code fires them", () => {
  it("R-X1, R-X4: InstructionsLoaded per memory file after SessionStart (CLAUDE.md, then its import); UserPromptSubmit gets /review notes.txt as typed, then UserPromptExpansion the command's facts; the model gets the expansion", async () => {
    await takeLog();
    const before = (await project.sim.requests()).length;
    const result = await run("/review notes.txt");
    expect(result.code, result.stderr).toBe(0);
    const logged = await takeLog();
    expect(logged.map((input) => input.hook_event_name)).toEqual([
      "SessionStart",
      "InstructionsLoaded",
      "InstructionsLoaded",
      "UserPromptSubmit",
      "UserPromptExpansion",
    ]);
    const [, claudeMd, imported, submitted, expanded] = logged;
    expect(claudeMd).toMatchObject({
      file_path: join(project.dir, "CLAUDE.md"),
      memory_type: "Project",
      load_reason: "session_start",
    });
    // Claude Code's InstructionsLoaded has neither a prompt id nor a permission mode.
    expect(Object.keys(claudeMd ?? {}).sort()).toEqual(
      [
        "cwd",
        "file_path",
        "hook_event_name",
        "load_reason",
        "memory_type",
        "session_id",
        "transcript_path",
      ].sort(),
    );
    expect(imported).toMatchObject({
      file_path: join(project.dir, "docs", "codename.md"),
      memory_type: "Project",
      load_reason: "include",
      parent_file_path: join(project.dir, "CLAUDE.md"),
    });
    expect(submitted).toMatchObject({ prompt: "/review notes.txt" });
    expect(expanded).toEqual({
      session_id: submitted?.session_id,
      transcript_path: submitted?.transcript_path,
      cwd: project.dir,
      prompt_id: submitted?.prompt_id,
      permission_mode: "default",
      hook_event_name: "UserPromptExpansion",
      expansion_type: "slash_command",
      command_name: "review",
      command_args: "notes.txt",
      command_source: "projectSettings",
      prompt: "/review notes.txt",
    });
    const [first] = (await project.sim.requests())
      .slice(before)
      .filter((record) => record.querySource === "sdk");
    const sent = JSON.stringify(JSON.parse(first?.rawBody ?? "{}").messages);
    expect(sent).toContain("Say in one word what notes.txt holds.");
  });

  it("R-X1: a UserPromptExpansion hook that exits 2 drops the prompt before any request, naming its reason", async () => {
    await takeLog();
    const before = (await project.sim.requests()).length;
    const result = await run("/review blocked.txt");
    expect(JSON.stringify(JSON.parse(result.stdout))).toContain(
      "a UserPromptExpansion hook blocked the prompt: no blocked reviews",
    );
    expect((await project.sim.requests()).length).toBe(before);
    expect((await takeLog()).map((input) => input.hook_event_name).slice(-2)).toEqual([
      "UserPromptSubmit",
      "UserPromptExpansion",
    ]);
  });
});
