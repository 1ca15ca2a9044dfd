import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  JOURNAL_FILE,
  LOCK_FILE,
  openLocalJournalBackend,
  readJournal,
  replayJournal,
} from "@forkloop/batch";
import { sessionLockPath } from "@forkloop/sdk";
import { type LockOwner, procProbe } from "@forkloop/sdk/owner-lock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Racer, startRacers, stopRacers } from "./racers.js";

/**
 * R-R5: 50 trials of 4 simultaneous resumes of one batch and of one session
 * — exactly one runs each time, 0 items completed twice. The racers are real processes (the
 * built packages, lock-racer.mjs), kept for all trials so a trial costs file operations, not
 * node start-ups; every trial starts them at one instant, on a lock in one of the states a user's
 * machine leaves: none, a kill -9'd owner's, a reused pid's, an older forkloop's bare pid, and a
 * dead owner whose taker died too (its takeover claim left behind).
 */
const TRIALS = 50;
const RACERS = 4;
const ITEMS = 3;
const RACER = fileURLToPath(new URL("./lock-racer.mjs", import.meta.url));

interface Answer {
  readonly trial: number;
  readonly outcome: "held" | "refused" | "error" | "released" | "ready";
  readonly completed?: string[];
  readonly message?: string;
}

let dir: string;
let racers: Racer<Answer>[];
let deadPid: number;
const stderr: string[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-locks-"));
  // A reaped process: its pid is free, as a kill -9'd owner's is.
  deadPid = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout);
  racers = await startRacers<Answer>(RACER, RACERS, stderr);
}, 60_000);
afterAll(async () => {
  await stopRacers(racers);
  await rm(dir, { recursive: true, force: true });
});

const SCENARIOS = [
  "no lock",
  "a dead owner",
  "a reused pid",
  "an older forkloop's pid",
  "a dead owner and a dead taker",
] as const;

/** Leaves the lock at `path` as `scenario` describes. */
async function prepare(path: string, scenario: (typeof SCENARIOS)[number], trial: number): Promise<void> {
  const owner = (fields: Partial<LockOwner>): string =>
    JSON.stringify({
      instance: `stale-${trial}`,
      ...procProbe.self(),
      since: "2026-01-01T00:00:00.000Z",
      command: "forkloop batch --resume old",
      ...fields,
    });
  switch (scenario) {
    case "no lock":
      return;
    case "a dead owner":
      return writeFile(path, owner({ pid: deadPid }));
    case "a reused pid":
      // This test's own pid is alive, but it started at another time than the lock says.
      return writeFile(path, owner({ pid: process.pid, startTime: "1" }));
    case "an older forkloop's pid":
      return writeFile(path, `${deadPid}\n`);
    case "a dead owner and a dead taker":
      await writeFile(path, owner({ pid: deadPid }));
      return writeFile(
        `${path}.takeover-stale-${trial}`,
        owner({ instance: `taker-${trial}`, pid: deadPid }),
      );
    default: {
      const unreachable: never = scenario;
      throw new Error(`unknown scenario ${String(unreachable)}`);
    }
  }
}

/** Starts every racer on `command` at one instant; returns the holder after checking the rest were refused by it. */
async function race(
  trial: number,
  command: Record<string, unknown>,
): Promise<{ holder: Racer<Answer>; answer: Answer }> {
  const at = Date.now() + 40;
  for (const racer of racers) racer.send({ trial, ...command, at });
  const answers = await Promise.all(racers.map((racer) => racer.next()));
  const held = answers.flatMap((answer, index) => (answer.outcome === "held" ? [index] : []));
  expect(
    answers.filter((answer) => answer.outcome === "error"),
    stderr.join(""),
  ).toEqual([]);
  expect(held, `trial ${trial}: ${JSON.stringify(answers)}`).toHaveLength(1);
  const holder = racers[held[0]!]!;
  for (const answer of answers.filter((a) => a.outcome === "refused")) {
    expect(answer.message).toContain(`is in use by process ${holder.child.pid} on `);
    expect(answer.message).toContain(`(kill ${holder.child.pid})`);
  }
  return { holder, answer: answers[held[0]!]! };
}

async function release(holder: Racer<Answer>, trial: number): Promise<void> {
  holder.send({ trial, release: true });
  expect((await holder.next()).outcome).toBe("released");
}

describe("R-R5 chaos: 4 simultaneous resumes, 50 trials each, on every kind of leftover lock", () => {
  it(`one batch: exactly one of ${RACERS} opens its journal each time; 0 items completed twice`, async () => {
    const taken: Record<string, number> = {};
    for (let trial = 1; trial <= TRIALS; trial++) {
      const scenario = SCENARIOS[trial % SCENARIOS.length]!;
      const batchDir = join(dir, `batch-${trial}`);
      await mkdir(batchDir);
      const setup = await openLocalJournalBackend({ dir: batchDir });
      await setup.enqueue(
        Array.from({ length: ITEMS }, (_, n) => ({ id: `i${n}`, label: `i${n}`, prompt: `item ${n}` })),
      );
      await setup.close();
      await prepare(join(batchDir, LOCK_FILE), scenario, trial);
      const { holder, answer } = await race(trial, { kind: "batch", dir: batchDir });
      expect(answer.completed).toHaveLength(ITEMS);
      await release(holder, trial);
      const { records } = await readJournal(batchDir);
      const completions = records.filter((record) => record.type === "completed").map((record) => record.id);
      expect(completions.sort(), `${scenario}: ${JOURNAL_FILE}`).toEqual(["i0", "i1", "i2"]);
      expect(replayJournal(records).items.every((item) => item.status === "succeeded")).toBe(true);
      taken[scenario] = (taken[scenario] ?? 0) + 1;
    }
    expect(Object.keys(taken)).toHaveLength(SCENARIOS.length);
  }, 240_000);

  it(`one session: exactly one of ${RACERS} holds it each time`, async () => {
    for (let trial = 1; trial <= TRIALS; trial++) {
      const scenario = SCENARIOS[trial % SCENARIOS.length]!;
      const sessionsDir = join(dir, `sessions-${trial}`);
      await mkdir(sessionsDir);
      const id = `s-${trial}`;
      await prepare(sessionLockPath(sessionsDir, id), scenario, trial);
      const { holder } = await race(trial, { kind: "session", dir: sessionsDir, id });
      await release(holder, trial);
    }
  }, 240_000);
});
