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
import { ensurePeersInstalled } from "../support/peers.js";
import { type ScriptedServer, startScriptedServer } from "../support/scripted-server.js";
import { compareRuns, describeTimelines } from "./compare-runs.js";
import { compilePrograms } from "./compile-programs.js";
import type { ProgramCase } from "./program-case.js";
import { runProgram } from "./run-program.js";

// R-K2: every corpus program runs once on the real Agent SDK (pinned, installed at test time)
// and once on @forkloop/sdk (the import swapped), against one scripted server; every difference
// must be named by the allowlist (allowlist.json), and every allowlist entry must still be needed.
const PROGRAMS_DIR = join(import.meta.dirname, "programs");
const programs = readdirSync(PROGRAMS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const allowlist = loadAllowlist(join(import.meta.dirname, "allowlist.json"));
const FORKLOOP_ENTRY = join(import.meta.dirname, "..", "..", "..", "packages", "sdk", "dist", "index.js");
/** Programs run at once (each starts two processes; the real side's is a Claude Code binary). */
const CONCURRENCY = 2;

let server: ScriptedServer;
let agentSdkEntry: string;
let compileDifferences: Map<string, ProgramDifference[]>;
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

beforeAll(async () => {
  agentSdkEntry = ensurePeersInstalled().agentSdkEntry;
  const compiled = await compilePrograms();
  compileDifferences = new Map(
    [...compiled].map(([program, list]) => [program, list.map((d) => ({ ...d, program }))]),
  );
  server = await startScriptedServer();
  runsDir = await mkdtemp(join(tmpdir(), "forkloop-conformance-"));
}, 300_000);

afterAll(async () => {
  await server?.close();
  if (runsDir) await rm(runsDir, { recursive: true, force: true });
});

describe("R-K2: the Agent SDK drop-in, proven against the real Agent SDK 0.3.333", () => {
  it.concurrent.each(programs)(
    "R-K2: %s runs the same on the Agent SDK and on forkloop",
    async (name) => {
      const programCase = (await import(join(PROGRAMS_DIR, name, "script.ts"))).default as ProgramCase;
      const { differences, timelines } = await withSlot(async () => {
        const options = { name, server, programCase, parentDir: runsDir };
        const [peer, forkloop] = await Promise.all([
          runProgram({ ...options, side: "agent-sdk", sdkEntry: agentSdkEntry }),
          runProgram({ ...options, side: "forkloop", sdkEntry: FORKLOOP_ENTRY }),
        ]);
        if (process.env.CONFORMANCE_REPORT) {
          for (const run of [peer, forkloop]) {
            await writeFile(
              join(process.env.CONFORMANCE_REPORT, `${name}.${run.side}.run.json`),
              JSON.stringify(run, null, 1),
            );
          }
        }
        const differences: ProgramDifference[] = [
          ...(compileDifferences.get(name) ?? []),
          ...compareRuns(peer, forkloop, programCase).map((d) => ({ ...d, program: name })),
        ];
        return { differences, timelines: describeTimelines(peer, forkloop) };
      });
      if (process.env.CONFORMANCE_REPORT) {
        // A developer's view of everything found, explained or not (one JSON file per program).
        await writeFile(
          join(process.env.CONFORMANCE_REPORT, `${name}.diff.json`),
          JSON.stringify(differences, null, 1),
        );
      }
      const verdict = judge(allowlist, differences);
      for (const entry of verdict.used) used.add(entry);
      compared.add(name);
      // The whole text as the message: a CI log shows every difference, not a truncated string,
      // and both sides' timelines, so a difference seen once can be read without a second run.
      const unexplained = describeDifferences(verdict.unexplained);
      expect(unexplained, unexplained === "" ? "" : `${unexplained}\n\n${timelines}`).toBe("");
    },
    400_000,
  );

  it("R-K2: every allowlist entry is still needed (a fix removes its entry)", () => {
    expect(
      programs.filter((name) => !compared.has(name)),
      "run the whole corpus to judge the allowlist",
    ).toEqual([]);
    expect(staleEntries(allowlist, used).map((entry) => entry.match)).toEqual([]);
  });
});
