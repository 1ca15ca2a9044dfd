import { readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type AllowlistEntry,
  describeDifferences,
  judge,
  loadAllowlist,
  staleEntries,
} from "../support/allowlist.js";
import type { ProgramDifference } from "../support/differences.js";
import { isolatedEnv, makeRunDirs } from "../support/isolated-run.js";
import { ensurePeersInstalled } from "../support/peers.js";
import { type ScriptedServer, startScriptedServer } from "../support/scripted-server.js";
import { compareCliRuns, describeTimelines } from "./compare-cli-runs.js";
import { claudeHelpFlags, flagDifferences, HIDDEN_PRINT_FLAGS, hiddenFlagAccepted } from "./flag-coverage.js";
import { runScenario } from "./run-scenario.js";
import type { CliScenario } from "./scenario.js";

// R-X1: every scenario runs as `claude <args>` (the real Claude Code CLI, pinned, installed at
// test time) and as `forkloop <args>`, against one scripted server; every difference must be named
// by allowlist.json, and every entry must still be needed.
const SCENARIOS_DIR = join(import.meta.dirname, "scenarios");
const scenarios = readdirSync(SCENARIOS_DIR)
  .filter((file) => file.endsWith(".ts"))
  .map((file) => file.slice(0, -3))
  .sort();
const allowlist = loadAllowlist(join(import.meta.dirname, "allowlist.json"));
/** Scenarios run at once (each runs a Claude Code process and forkloop in this process). */
const CONCURRENCY = 2;
/** The flags' check is judged as one more "scenario". */
const FLAGS = "flags";

let server: ScriptedServer;
let claudeBinary: string;
let runsDir: string;
const used = new Set<AllowlistEntry>();
const compared = new Set<string>();
let slots = CONCURRENCY;
const waiting: (() => void)[] = [];

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  if (slots === 0) await new Promise<void>((resolve) => waiting.push(resolve));
  else slots--;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else slots++;
  }
}

function judged(name: string, differences: readonly { code: string; detail: string }[]): string {
  const verdict = judge(
    allowlist,
    differences.map((d): ProgramDifference => ({ ...d, program: name })),
  );
  for (const entry of verdict.used) used.add(entry);
  compared.add(name);
  return describeDifferences(verdict.unexplained);
}

async function report(name: string, value: unknown): Promise<void> {
  if (process.env.CONFORMANCE_REPORT)
    await writeFile(join(process.env.CONFORMANCE_REPORT, name), JSON.stringify(value, null, 1));
}

beforeAll(async () => {
  claudeBinary = ensurePeersInstalled().claudeCodeBinary;
  server = await startScriptedServer();
  runsDir = await mkdtemp(join(tmpdir(), "forkloop-cli-conformance-"));
}, 300_000);

afterAll(async () => {
  await server?.close();
  if (runsDir) await rm(runsDir, { recursive: true, force: true });
});

describe("R-X1: `forkloop -p` as a drop-in for `claude -p`, proven against the real Claude Code CLI 2.1.332", () => {
  it("R-X3: every print-mode flag of `claude --help` (and the hidden ones scripts use) is read or refused with a reason, never unknown", async () => {
    const dirs = await makeRunDirs(FLAGS, {}, runsDir);
    const env = isolatedEnv(dirs, { url: server.url, apiKey: "sk-conformance-flags" });
    const hidden = HIDDEN_PRINT_FLAGS.filter((flag) => !hiddenFlagAccepted(claudeBinary, env, flag));
    expect(
      hidden.map((flag) => flag.name),
      "Claude Code no longer accepts these hidden flags",
    ).toEqual([]);
    const flags = [...claudeHelpFlags(claudeBinary, env), ...HIDDEN_PRINT_FLAGS];
    expect(flags.length).toBeGreaterThan(40);
    const differences = await flagDifferences(flags, dirs.work);
    await report(`${FLAGS}.diff.json`, differences);
    const flagsText = judged(FLAGS, differences);
    expect(flagsText, flagsText).toBe("");
  }, 120_000);

  it.concurrent.each(scenarios)(
    "R-X1: %s runs the same under claude -p and forkloop -p",
    async (name) => {
      const scenario = (await import(join(SCENARIOS_DIR, `${name}.ts`))).default as CliScenario;
      const { differences, timelines } = await withSlot(async () => {
        const options = { name, scenario, server, parentDir: runsDir, claudeBinary };
        const [peer, forkloop] = await Promise.all([
          runScenario({ ...options, side: "claude" }),
          runScenario({ ...options, side: "forkloop" }),
        ]);
        await report(`${name}.claude.run.json`, peer);
        await report(`${name}.forkloop.run.json`, forkloop);
        return {
          differences: compareCliRuns(peer, forkloop, scenario),
          timelines: describeTimelines(peer, forkloop),
        };
      });
      await report(`${name}.diff.json`, differences);
      // The whole text as the message: a CI log shows every difference, not a truncated string,
      // and both sides' hooks and lines in order, so a difference seen once can be read.
      const unexplained = judged(name, differences);
      expect(unexplained, unexplained === "" ? "" : `${unexplained}\n\n${timelines}`).toBe("");
    },
    300_000,
  );

  it("R-X1: every allowlist entry is still needed (a fix removes its entry)", () => {
    expect(
      [FLAGS, ...scenarios].filter((name) => !compared.has(name)),
      "run the whole harness to judge the allowlist",
    ).toEqual([]);
    expect(staleEntries(allowlist, used).map((entry) => entry.match)).toEqual([]);
  });
});
