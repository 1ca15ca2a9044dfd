import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, startCli, startSimProcess, streamJsonLines, waitForOutput } from "@forkloop/cli/testing";
import { livePidsWithArgument, waitFor } from "@forkloop/tools/testing";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

/**
 * R-R8: SIGHUP — the terminal closed, the ssh connection dropped — is handled like SIGTERM in
 * every command. Before, it had no handler: the CLI died at once, an unsandboxed Bash command
 * (its own process group) went on to finish its side effect after forkloop was gone, and a batch
 * wrote no report. SIGQUIT (Ctrl+\ in a terminal, a supervisor's quit), its neighbour, killed the
 * process with a core dump the same way: it stops as SIGTERM does too, exit 131.
 */
/** A sleep duration no other process on the machine has: it names the Bash command's sleep in /proc. */
const TOKEN = `${7_000_000 + Math.floor(Math.random() * 999_999)}`;
let dir: string;
let sim: Awaited<ReturnType<typeof startSimProcess>>;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-hangup-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 6; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
  const scenario = join(dir, "scenario.json");
  const command = `touch started; sleep ${TOKEN}; touch side-effect`;
  await writeFile(
    scenario,
    JSON.stringify({
      rules: [
        {
          match: { turn: 0, lastUserText: "deploy" },
          reply: { content: [{ type: "tool_use", name: "Bash", input: { command } }] },
        },
      ],
      fallback: { content: [{ type: "text", text: "done (scripted by the simulator)" }] },
    }),
  );
  sim = await startSimProcess(dir, ["--scenario", scenario]);
});
afterEach(() => {
  for (const pid of livePidsWithArgument(TOKEN)) process.kill(pid, "SIGKILL");
});
afterAll(async () => {
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

const SIGNALS = [
  ["SIGHUP", 129],
  ["SIGQUIT", 131],
] as const;

describe("R-R8 chaos: SIGHUP and SIGQUIT are handled like SIGTERM", () => {
  it.each(SIGNALS)(
    "%s mid-Bash-command: the command's process group is stopped, so its side effect never happens; exit %d; the session resumes",
    async (signal, code) => {
      await rm(join(dir, "started"), { force: true });
      const run = startCli(
        ["run", "deploy", "--output-format", "stream-json", "--allowed-tools", "Bash", "--sandbox", "off"],
        { cwd: dir, env: sim.env },
      );
      expect(await waitFor(() => livePidsWithArgument(TOKEN).length > 0, 1500), run.stderr()).toBe(true);
      expect(existsSync(join(dir, "started"))).toBe(true);
      run.child.kill(signal);
      const stopped = await run.exited;
      expect(stopped.code, stopped.stderr).toBe(code);
      expect(stopped.stderr).toContain(`forkloop: ${signal} received, stopping`);
      // Gone with forkloop: nothing is left that could still run `touch side-effect`.
      expect(livePidsWithArgument(TOKEN)).toEqual([]);
      expect(existsSync(join(dir, "side-effect"))).toBe(false);
      const sessionId = streamJsonLines(stopped.stdout).at(-1)?.session_id ?? "";
      const resumed = await runCli(["run", "--resume", sessionId, "what happened?"], {
        cwd: dir,
        env: sim.env,
      });
      expect(resumed.code, resumed.stderr).toBe(0);
    },
    120_000,
  );

  it.each(SIGNALS)(
    "%s mid-batch: the report is written, exit %d, and a plain --resume finishes the rest",
    async (signal, code) => {
      const id = signal.toLowerCase();
      const batch = startCli(
        ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--concurrency", "2", "--id", id],
        { cwd: dir, env: { FORKLOOP_SIM_FAULTS: "slow@1+:slow_ms=40" } },
      );
      await waitForOutput(batch.child, batch.stderr, (text) => /^ok /m.test(text));
      batch.child.kill(signal);
      const stopped = await batch.exited;
      expect(stopped.code, stopped.stderr).toBe(code);
      expect(stopped.stdout).toMatch(/6 items: \d succeeded, 0 failed, \d not finished/);
      expect(stopped.stdout).toMatch(/^report: .*report\.md$/m);
      expect(stopped.stderr).toContain(`interrupted: resume with \`forkloop batch --resume ${id}\``);
      const resumed = await runCli(["batch", "--resume", id], { cwd: dir });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toMatch(/6 items: 6 succeeded, 0 failed/);
    },
    120_000,
  );
});
