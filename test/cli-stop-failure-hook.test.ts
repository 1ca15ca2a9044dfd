import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X1: a turn that ends on an API error fires the settings' StopFailure hooks instead of Stop,
// with Claude Code's input (the error's kind, the text shown for it); its matcher sees the kind.
const project = useSimProject("stop-failure", async (_dir, home) => {
  const log = (name: string) => [
    {
      hooks: [
        { type: "command", command: `cat >> "${home}/${name}.jsonl"; echo >> "${home}/${name}.jsonl"` },
      ],
    },
  ];
  await mkdir(join(home, ".claude"), { recursive: true });
  await writeFile(
    join(home, ".claude", "settings.json"),
    JSON.stringify({
      hooks: {
        StopFailure: [
          ...log("failure"),
          { matcher: "rate_limit", hooks: [{ type: "command", command: `touch "${home}/rate-limit"` }] },
        ],
        Stop: log("stop"),
      },
    }),
  );
});

const run = (args: readonly string[]) =>
  runCliInProcess(["-p", ...args], { cwd: project.dir, env: project.env() });
const lines = async (name: string) =>
  (await readFile(join(project.home, `${name}.jsonl`), "utf8").catch(() => ""))
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

describe("R-X1: StopFailure", () => {
  it("R-X1: a model the API does not serve ends the turn with StopFailure (error model_not_found, the text shown), not Stop; a rate_limit matcher does not match", async () => {
    const failed = await run(["Say hello.", "--model", "claude-sonnet-4-5", "--output-format", "json"]);
    const result = JSON.parse(failed.stdout) as { is_error: boolean; result: string; session_id: string };
    expect(result.is_error).toBe(true);
    const failures = await lines("failure");
    expect(failures).toEqual([
      {
        session_id: result.session_id,
        transcript_path: expect.any(String),
        cwd: project.dir,
        prompt_id: expect.any(String),
        hook_event_name: "StopFailure",
        error: "model_not_found",
        last_assistant_message: result.result,
      },
    ]);
    expect(await lines("stop")).toEqual([]);
    await expect(readFile(join(project.home, "rate-limit"))).rejects.toThrow();
    // A turn that ends well fires Stop, and no StopFailure.
    const ok = await run(["Say hello.", "--model", "claude-sonnet-4-6"]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await lines("stop")).toHaveLength(1);
    expect(await lines("failure")).toHaveLength(1);
  });
});
