import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X3: the stream-json flags of `claude -p` that add lines — --replay-user-messages (stdin's user
// messages printed back) and --include-hook-events (each hook command's run) — against the
// simulator over HTTP, with real hook processes.

// A hook per event the simulator's plain answer fires; UserPromptSubmit's fails (exit 1).
const project = useSimProject("stream-flags", async (_dir, home) => {
  const hook = (command: string) => [{ hooks: [{ type: "command", command }] }];
  await mkdir(join(home, ".claude"));
  await writeFile(
    join(home, ".claude", "settings.json"),
    JSON.stringify({
      hooks: {
        SessionStart: hook("echo started"),
        UserPromptSubmit: hook("echo no >&2; exit 1"),
        Stop: hook("true"),
      },
    }),
  );
});

const run = (args: readonly string[], stdin?: string) =>
  runCliInProcess(["-p", ...args], {
    cwd: project.dir,
    env: project.env(),
    ...(stdin === undefined ? {} : { stdin }),
  });
type Line = Record<string, unknown>;
const linesOf = (stdout: string): Line[] =>
  stdout
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Line);
const kind = (line: Line) =>
  line.type === "system" ? `system/${line.subtype}` : line.isReplay === true ? "replay" : String(line.type);
const STREAM = ["--output-format", "stream-json", "--verbose"];
const input = (content: string, uuid?: string) =>
  JSON.stringify({
    type: "user",
    message: { role: "user", content },
    ...(uuid === undefined ? {} : { uuid }),
  });

describe("R-X3: stream-json lines of --replay-user-messages and --include-hook-events", () => {
  it("R-X3: --replay-user-messages prints each stdin user message back as sent, after its turn's init and before its answer", async () => {
    const uuid = "0d9c7a5e-1b2f-4c3d-8e4f-5a6b7c8d9e0f";
    const stdin = `${input("Say hello.", uuid)}\n${input("Say bye.")}\n`;
    const result = await run(["--input-format", "stream-json", ...STREAM, "--replay-user-messages"], stdin);
    expect(result.code, result.stderr).toBe(0);
    const lines = linesOf(result.stdout).filter((line) => !String(line.subtype ?? "").startsWith("hook_"));
    // One assistant line per block of the reply: runs of them read as one.
    const kinds = lines.map(kind).filter((k, i, all) => k !== "assistant" || all[i - 1] !== "assistant");
    expect(kinds).toEqual([
      "system/init",
      "replay",
      "assistant",
      "result",
      "system/init",
      "replay",
      "assistant",
      "result",
    ]);
    const [first, second] = lines.filter((line) => line.isReplay === true);
    expect(first).toMatchObject({
      message: { role: "user", content: "Say hello." },
      parent_tool_use_id: null,
      uuid,
      session_id: lines[0]?.session_id,
    });
    expect(second?.message).toEqual({ role: "user", content: "Say bye." });
    expect(typeof second?.timestamp).toBe("string");
    // The control: without the flag the input is not printed back.
    const plain = await run(["--input-format", "stream-json", ...STREAM], stdin);
    expect(linesOf(plain.stdout).filter((line) => line.isReplay === true)).toEqual([]);
  });

  it("R-X3: --replay-user-messages without stream-json input and output is exit 2 naming the fix, before any request", async () => {
    const before = (await project.sim.requests()).length;
    const result = await run(["Say hello.", ...STREAM, "--replay-user-messages"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      "--replay-user-messages requires both --input-format stream-json and --output-format stream-json",
    );
    expect((await project.sim.requests()).length).toBe(before);
  });

  it("R-X3: --include-hook-events prints each hook command's start and end (output, exit code, outcome); without it only SessionStart's", async () => {
    const result = await run(["Say hello.", ...STREAM, "--include-hook-events"]);
    expect(result.code, result.stderr).toBe(0);
    const lines = linesOf(result.stdout);
    const hookLines = lines.filter((line) => String(line.subtype ?? "").startsWith("hook_"));
    expect(hookLines.map((line) => `${line.subtype} ${line.hook_name}`)).toEqual([
      "hook_started SessionStart:startup",
      "hook_response SessionStart:startup",
      "hook_started UserPromptSubmit",
      "hook_response UserPromptSubmit",
      "hook_started Stop",
      "hook_response Stop",
    ]);
    // Each response answers its start; the session's hooks come before its init line.
    expect(hookLines[1]?.hook_id).toBe(hookLines[0]?.hook_id);
    expect(lines.map(kind).indexOf("system/init")).toBe(4);
    expect(hookLines[1]).toMatchObject({
      hook_event: "SessionStart",
      stdout: "started\n",
      output: "started\n",
      exit_code: 0,
      outcome: "success",
    });
    expect(hookLines[3]).toMatchObject({ stderr: "no\n", exit_code: 1, outcome: "error" });
    expect(kind(lines.at(-1) ?? {})).toBe("result");

    const plain = await run(["Say hello.", ...STREAM]);
    expect(
      linesOf(plain.stdout)
        .filter((line) => String(line.subtype ?? "").startsWith("hook_"))
        .map((line) => line.hook_event),
    ).toEqual(["SessionStart", "SessionStart"]);
    // Other formats take the flag and print as before, as Claude Code does.
    const text = await run(["Say hello.", "--include-hook-events"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).not.toContain("hook_started");
  });
});
