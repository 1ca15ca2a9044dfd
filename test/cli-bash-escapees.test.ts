import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startCli, startSimProcess } from "@forkloop/cli/testing";
import { livePidsWithArgument, waitFor } from "@forkloop/tools/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/** Sleep durations no other process on the machine has: each names one sleep in /proc. */
const used: string[] = [];
function tokens(count: number): string[] {
  const made = Array.from(
    { length: count },
    (_, i) => `${8_000_000 + i * 100_000 + Math.floor(Math.random() * 99_999)}`,
  );
  used.push(...made);
  return made;
}
const alive = (list: readonly string[]) => list.filter((token) => livePidsWithArgument(token).length > 0);

/**
 * Sleeps that leave the Bash call's process group; the `trap` ones ignore SIGTERM (an ignored
 * signal stays ignored across exec), so only a SIGKILL ends them.
 */
function escaping([a, b, c, d]: readonly string[]): string {
  return [
    `setsid sleep ${a} &`,
    `setsid sh -c 'sleep ${b}' &`,
    `( setsid sh -c 'trap "" TERM; sleep ${c} &' & );`,
    `setsid sh -c 'trap "" TERM; exec sleep ${d}' &`,
  ].join(" ");
}

const ended = tokens(4);
const interrupted = tokens(4);
let dir: string;
let sim: Awaited<ReturnType<typeof startSimProcess>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-escapees-"));
  const bash = (command: string) => ({ content: [{ type: "tool_use", name: "Bash", input: { command } }] });
  const scenario = join(dir, "escapees-scenario.json");
  await writeFile(
    scenario,
    JSON.stringify({
      rules: [
        {
          match: { turn: 0, lastUserText: "and return" },
          reply: bash(`${escaping(ended)} sleep 0.3; echo started`),
        },
        {
          match: { turn: 0, lastUserText: "and wait" },
          reply: bash(`${escaping(interrupted)} sleep 60`),
        },
      ],
      fallback: { content: [{ type: "text", text: "done (scripted by the simulator)" }] },
    }),
  );
  sim = await startSimProcess(dir, ["--scenario", scenario]);
});
afterEach(() => {
  // A failing test still leaves no sleeper behind on the shared machine.
  for (const pid of used.flatMap(livePidsWithArgument)) process.kill(pid, "SIGKILL");
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const flags = ["--output-format", "stream-json", "--allowed-tools", "Bash", "--sandbox", "off"];

describe("what an unsandboxed Bash call starts outside its process group ends with it (built CLI)", () => {
  it("forkloop run: when the call returns, none of its setsid / double-forked sleeps is alive", async () => {
    const run = await runCli(["run", "start sleepers and return", ...flags], { cwd: dir, env: sim.env });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain("started");
    expect(alive(ended)).toEqual([]);
  });

  it("a second Ctrl+C exits at once during the call: the exit still ends them, SIGTERM-proof ones included", async () => {
    const cli = startCli(["run", "start sleepers and wait", ...flags], { cwd: dir, env: sim.env });
    expect(await waitFor(() => alive(interrupted).length === interrupted.length, 500), cli.stdout()).toBe(
      true,
    );
    cli.child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 100));
    cli.child.kill("SIGINT");
    const result = await cli.exited;
    expect(result.code).toBe(130);
    expect(alive(interrupted)).toEqual([]);
  });
});
