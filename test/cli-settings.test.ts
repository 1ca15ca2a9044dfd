import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamJsonLineSchema } from "@forkloop/cli";
import { runCliInProcess, withSim, writeScenario } from "@forkloop/cli/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

// Settings files reaching every tool: deny rules inside directory searches, and the settings'
// tool hooks inside batch sub-agents.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-settings-"));
  await mkdir(join(dir, ".forkloop"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeSettings(settings: unknown): Promise<void> {
  await writeFile(join(dir, ".forkloop", "settings.json"), JSON.stringify(settings));
}

describe("settings files in run and batch", () => {
  it('R-P1: permissions.disableBypassPermissionsMode "disable" refuses bypassPermissions in run and batch (exit 2, naming the setting), before any state exists', async () => {
    // A narrowing key: an untrusted project's settings keep it (R-S5).
    await writeSettings({ permissions: { disableBypassPermissionsMode: "disable" } });
    await writeFile(join(dir, "a.ts"), "export const a = 1;\n");
    const refusals = await Promise.all([
      runCliInProcess(["run", "hi", "--dangerously-skip-permissions"], { cwd: dir }),
      runCliInProcess(["run", "hi", "--permission-mode", "bypassPermissions"], { cwd: dir }),
      runCliInProcess(
        [
          "batch",
          "--files",
          "*.ts",
          "--prompt",
          "p {{file}}",
          "--permission-mode",
          "bypassPermissions",
          "--state-dir",
          "state",
        ],
        {
          cwd: dir,
        },
      ),
    ]);
    for (const refused of refusals) {
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain(
        "bypassPermissions is disabled by the settings (permissions.disableBypassPermissionsMode",
      );
    }
    await expect(readFile(join(dir, "state", "batches"), "utf8")).rejects.toThrow(/ENOENT/);
    // Another mode runs.
    expect(
      (await runCliInProcess(["run", "hi", "--permission-mode", "acceptEdits"], { cwd: dir })).code,
    ).toBe(0);
  });

  it("R-P1: a deny rule Read(./secrets.txt) also hides the file from Grep over the directory", async () => {
    await writeFile(join(dir, "secrets.txt"), "SECRET=hunter2\n");
    await writeFile(join(dir, "notes.md"), "The SECRET is kept elsewhere.\n");
    await writeSettings({ permissions: { deny: ["Read(./secrets.txt)"] } });
    const scenario = await writeScenario(
      join(dir, "grep.json"),
      [
        {
          match: { turn: 0 },
          reply: {
            content: [
              {
                type: "tool_use",
                name: "Grep",
                input: { pattern: "SECRET", path: ".", output_mode: "content" },
              },
            ],
          },
        },
      ],
      "searched (scripted by the simulator)",
    );
    const result = await withSim(dir, ["--scenario", scenario], (sim) =>
      runCliInProcess(["run", "Find the secret", "--output-format", "stream-json"], {
        cwd: dir,
        env: sim.env,
      }),
    );
    expect(result.code, result.stderr).toBe(0);
    const toolResults = result.stdout
      .trim()
      .split("\n")
      .map((line) => streamJsonLineSchema.parse(JSON.parse(line)))
      .filter((line) => line.type === "user")
      .map((line) => JSON.stringify(line.message.content));
    expect(toolResults).toHaveLength(1);
    expect(toolResults[0]).toContain("notes.md");
    expect(toolResults[0]).not.toContain("secrets.txt");
    expect(toolResults[0]).not.toContain("hunter2");
  });

  it("R-F2: a blocking PreToolUse hook of the settings applies inside a batch item's sub-agent", async () => {
    await writeFile(join(dir, "notes.md"), "# Notes\nthe forbidden content\n");
    await writeSettings({
      hooks: {
        PreToolUse: [
          {
            matcher: "Read",
            hooks: [{ type: "command", command: "echo 'reads are blocked by policy' >&2; exit 2" }],
          },
        ],
      },
    });
    await withSim(dir, [], async (sim) => {
      const result = await runCliInProcess(
        [
          "batch",
          "--files",
          "notes.md",
          "--prompt",
          "Summarize {{file}}",
          "--id",
          "hooked",
          "--output",
          "out",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(result.code, result.stderr).toBe(0);
      // The sub-agent's second request carries the hook's refusal instead of the file.
      const bodies = (await sim.requests()).map((record) => record.rawBody);
      expect(bodies).toHaveLength(2);
      expect(bodies[1]).toContain("reads are blocked by policy");
      expect(bodies[1]).not.toContain("the forbidden content");
    });
    const results = (await readFile(join(dir, "out", "results.jsonl"), "utf8")).trim().split("\n");
    expect(results.map((line) => (JSON.parse(line) as { turns: number }).turns)).toEqual([2]);
  });

  it("a one-turn item's progress line says '1 turn', not '1 turns'", async () => {
    await writeFile(join(dir, "tasks.jsonl"), '"say hello"\n');
    const result = await runCliInProcess(["batch", "--items", "tasks.jsonl", "--prompt", "Please {{item}}"], {
      cwd: dir,
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^ok {5}\S+ \(1 turn, \$/m);
    expect(result.stdout).toMatch(/^1 item: 1 succeeded, 0 failed$/m);
    expect(result.stdout).toMatch(/^1 turn · tokens/m);
  });
});
