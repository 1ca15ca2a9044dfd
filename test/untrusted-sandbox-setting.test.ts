/**
 * R-S11: an untrusted project's settings cannot switch off the sandbox that dontAsk (and batch)
 * turn on by default — in the CLI and in `query()` — and stderr says once what was ignored and how
 * to trust the project. On a real bwrap, with the "outside" directory under /var/tmp where the
 * sandbox does not hide it. Control: the same project trusted (--trust-project / trustProject)
 * does switch it off, and the same command writes outside.
 */
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, withSim, writeScenario } from "@forkloop/cli/testing";
import { query } from "@forkloop/sdk";
import { createOutsideDir, type TempWorkspace } from "@forkloop/tools/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";

let base: string;
let outside: TempWorkspace;
beforeEach(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-untrusted-sandbox-")));
  outside = createOutsideDir("forkloop-untrusted-sandbox-");
});
afterEach(() => {
  rmSync(base, { recursive: true, force: true });
  outside.cleanup();
});

/** A project whose own settings say `sandbox: "off"`, and a home of the user's elsewhere. */
function project(name: string): { root: string; home: string } {
  const root = join(base, name);
  mkdirSync(join(root, ".forkloop"), { recursive: true });
  mkdirSync(join(base, "home"), { recursive: true });
  writeFileSync(join(root, ".forkloop/settings.json"), JSON.stringify({ sandbox: "off" }));
  return { root, home: join(base, "home") };
}

/** Every model turn asks for one Bash call that writes outside the workspace (touch: only the sandbox can stop it). */
async function scenario(root: string, target: string): Promise<string> {
  return writeScenario(
    join(base, `${root.split("/").pop()}-scenario.json`),
    [
      {
        match: { turn: 0 },
        reply: { content: [{ type: "tool_use", name: "Bash", input: { command: `touch '${target}'` } }] },
      },
    ],
    "done (scripted)",
  );
}

const IGNORED = /settings\.json: ignored sandbox "off" — the project is not trusted; run `forkloop trust /g;

describe("R-S11: an untrusted project cannot switch the sandbox off (real bwrap)", () => {
  it("R-S11: forkloop run --permission-mode dontAsk keeps its default sandbox, says so once; trusted, the project's off holds (control)", async () => {
    for (const trusted of [false, true]) {
      const { root, home } = project(`cli-${trusted}`);
      const target = join(outside.root, `cli-${trusted}.txt`);
      const file = await scenario(root, target);
      const result = await withSim(root, ["--scenario", file], (sim) =>
        runCliInProcess(
          [
            "run",
            "go",
            "--permission-mode",
            "dontAsk",
            "--allowed-tools",
            "Bash",
            ...(trusted ? ["--trust-project"] : []),
          ],
          { cwd: root, env: { ...sim.env, HOME: home } },
        ),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(existsSync(target), `trusted ${trusted}`).toBe(trusted);
      expect(result.stderr.match(IGNORED)?.length ?? 0, result.stderr).toBe(trusted ? 0 : 1);
    }
  }, 120_000);

  it("R-S11: query() in dontAsk keeps its default sandbox against the project's settings; trustProject lets them switch it off (control)", async () => {
    for (const trusted of [false, true]) {
      const { root, home } = project(`sdk-${trusted}`);
      const target = join(outside.root, `sdk-${trusted}.txt`);
      const file = await scenario(root, target);
      const warnings: string[] = [];
      await withSim(root, ["--scenario", file], async (sim) => {
        for await (const _ of query({
          prompt: "go",
          options: {
            cwd: root,
            permissionMode: "dontAsk",
            allowedTools: ["Bash"],
            trustProject: trusted,
            // The Agent SDK reads no settings files unless asked: ask, so the project's are read.
            settingSources: ["user", "project", "local"],
            stateDir: join(base, `state-${trusted}`),
            env: { ...sim.env, HOME: home, PATH: process.env.PATH ?? "" },
            stderr: (line) => warnings.push(line),
          },
        })) {
          // drain
        }
      });
      expect(existsSync(target), `trusted ${trusted}`).toBe(trusted);
      expect(warnings.join("\n").match(IGNORED)?.length ?? 0, warnings.join("\n")).toBe(trusted ? 0 : 1);
    }
  }, 120_000);
});
