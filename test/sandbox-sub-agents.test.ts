/**
 * R-S6 through the CLI and a simulator in this process (`runCliInProcess`; the process is not the
 * subject) on a real bwrap: batch items and Agent sub-agents run in worker threads that build
 * their own Bash tool; it must run in bubblewrap as the main agent's does (and get the settings'
 * `env`, not the model credentials). Each sandboxed run has a `--sandbox off` control that does
 * write outside (and into the project's .forkloop/, R-S9), so the tests can fail.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { createOutsideDir, type TempWorkspace } from "@forkloop/tools/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const API_KEY = "sk-ant-sandbox-test-key-41c7";

let base: string;
let outsideBase: TempWorkspace;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-sandbox-workers-")));
  // R-S9: not under /tmp, which bubblewrap hides — there "cannot write outside" could not fail.
  outsideBase = createOutsideDir("forkloop-sandbox-workers-");
});
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  outsideBase.cleanup();
});

/** A project (also HOME, so its settings are the user's own) and a directory outside it. */
function project(name: string): { root: string; outside: string } {
  const root = join(base, name, "project");
  const outside = join(outsideBase.root, name);
  mkdirSync(join(root, ".forkloop"), { recursive: true });
  mkdirSync(outside, { recursive: true });
  writeFileSync(
    join(root, ".forkloop/settings.json"),
    JSON.stringify({ env: { SETTINGS_ENV: "from-settings" } }),
  );
  return { root, outside };
}

/**
 * What the worker's Bash runs: a file made inside, one outside, and what its environment holds.
 * Programs, not redirections: the permission checker sees a redirect's target (and would refuse
 * the outside one itself); what `touch` and `tee` write only the sandbox can stop.
 */
function payload(outside: string): string {
  return [
    "touch inside.txt",
    `touch '${outside}/escaped.txt'`,
    // R-S9: what a later session would load stays read-only inside the sandbox.
    "touch .forkloop/planted.json",
    'printf "env=%s key=%s\\n" "$SETTINGS_ENV" "$ANTHROPIC_API_KEY" | tee env.txt',
  ].join("; ");
}

async function withScenario<T>(
  dir: string,
  rules: readonly Record<string, unknown>[],
  body: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const scenario = join(dir, "scenario.json");
  writeFileSync(
    scenario,
    JSON.stringify({ rules, fallback: { content: [{ type: "text", text: "done (scripted)" }] } }),
  );
  const sim = await startSimInProcess(dir, ["--scenario", scenario]);
  try {
    return await body({ ...sim.env, ANTHROPIC_API_KEY: API_KEY });
  } finally {
    await sim.stop();
  }
}

const bashCall = (command: string) => ({
  content: [{ type: "tool_use", name: "Bash", input: { command } }],
});

describe("R-S6: Bash in worker threads runs in the sandbox", () => {
  it("R-S6: a batch item's allowed Bash cannot write outside the workspace (batch: auto sandboxes); --sandbox off can", async () => {
    for (const sandbox of ["default", "off"] as const) {
      const { root, outside } = project(`batch-${sandbox}`);
      writeFileSync(join(root, "tasks.jsonl"), '"one"\n');
      const result = await withScenario(
        join(base, `batch-${sandbox}`),
        [{ match: { querySource: "batch" }, reply: bashCall(payload(outside)), times: 1 }],
        (env) =>
          runCliInProcess(
            [
              "batch",
              "--items",
              "tasks.jsonl",
              "--prompt",
              "Do {{item}}",
              "--allowed-tools",
              "Bash",
              // The sandbox is the subject: the item works in the project itself, not in a copy (R-B2).
              "--no-isolate",
              ...(sandbox === "off" ? ["--sandbox", "off"] : []),
            ],
            { cwd: root, env },
          ),
      );
      expect(result.code, result.stderr).toBe(0);
      // The call ran (inside the workspace it may write) …
      expect(existsSync(join(root, "inside.txt"))).toBe(true);
      // … with the settings' env and without the model's key, sandboxed or not (R-S4) …
      expect(readFileSync(join(root, "env.txt"), "utf8")).toBe("env=from-settings key=\n");
      // … and only unsandboxed could it write outside.
      expect(existsSync(join(outside, "escaped.txt")), `sandbox ${sandbox}`).toBe(sandbox === "off");
      expect(existsSync(join(root, ".forkloop/planted.json")), `sandbox ${sandbox}`).toBe(sandbox === "off");
    }
  }, 120_000);

  it("R-S6: dontAsk's default sandbox (auto) without a working bwrap says so once on stderr, and the allowed Bash still runs", async () => {
    const { root } = project("auto-missing");
    // A PATH with bash but no bwrap: auto cannot sandbox and must say so, not fail and not stay silent.
    const bin = join(base, "auto-missing", "bin");
    mkdirSync(bin);
    symlinkSync(realpathSync("/bin/bash"), join(bin, "bash"));
    const result = await withScenario(
      join(base, "auto-missing"),
      [
        {
          match: { turn: 0 },
          reply: {
            content: [
              { type: "tool_use", name: "Bash", input: { command: "/usr/bin/touch one.txt" } },
              { type: "tool_use", name: "Bash", input: { command: "/usr/bin/touch two.txt" } },
            ],
          },
        },
      ],
      (env) =>
        runCliInProcess(["run", "write", "--permission-mode", "dontAsk", "--allowed-tools", "Bash"], {
          cwd: root,
          env: { ...env, PATH: bin },
        }),
    );
    expect(result.code, result.stderr).toBe(0);
    const notices = result.stderr.match(/sandbox auto: .*Bash runs without the sandbox/g) ?? [];
    expect(notices, result.stderr).toHaveLength(1);
    expect(existsSync(join(root, "one.txt")) && existsSync(join(root, "two.txt"))).toBe(true);
  }, 120_000);

  it("R-S6: an Agent sub-agent's allowed Bash in `forkloop run --sandbox on` cannot write outside; --sandbox off can", async () => {
    for (const sandbox of ["on", "off"] as const) {
      const { root, outside } = project(`agent-${sandbox}`);
      const result = await withScenario(
        join(base, `agent-${sandbox}`),
        [
          {
            match: { querySource: "agent:general-purpose" },
            reply: bashCall(payload(outside)),
            times: 1,
          },
          {
            match: { turn: 0, querySource: "sdk" },
            reply: {
              content: [
                { type: "tool_use", name: "Agent", input: { description: "write", prompt: "Write." } },
              ],
            },
          },
        ],
        (env) =>
          runCliInProcess(["run", "delegate", "--allowed-tools", "Bash", "--sandbox", sandbox], {
            cwd: root,
            env,
          }),
      );
      expect(result.code, result.stderr).toBe(0);
      expect(existsSync(join(root, "inside.txt"))).toBe(true);
      expect(readFileSync(join(root, "env.txt"), "utf8")).toBe("env=from-settings key=\n");
      expect(existsSync(join(outside, "escaped.txt")), `sandbox ${sandbox}`).toBe(sandbox === "off");
      expect(existsSync(join(root, ".forkloop/planted.json")), `sandbox ${sandbox}`).toBe(sandbox === "off");
    }
  }, 120_000);
});
