import { spawnSync } from "node:child_process";
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOCK_FILE, readJournal } from "@forkloop/batch";
import {
  batchStateDir,
  runCliInProcess,
  type SimHandle,
  startSimInProcess,
  streamJsonLines,
} from "@forkloop/cli/testing";
import { procProbe } from "@forkloop/sdk/owner-lock";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EndpointInFront, endpointInFront } from "../support/endpoint-in-front.js";
import { type Racer, startRacers, stopRacers } from "./racers.js";

/**
 * R-R5 through the CLI's whole command path: 50 trials of 4 simultaneous
 * `forkloop batch --resume ID` and 50 of 4 simultaneous `forkloop run --resume S` — exactly one
 * runs each time, the other three exit 2 naming it, 0 items completed twice. The racers are 4
 * real processes (cli-racer.mjs) that run each command line through the built CLI's
 * runCliInProcess, so the locks are contended by 4 pids on the real lock files, as 4 terminals
 * would; exclusive-locks.test.ts races the lock calls alone, exclusive-locks-cli.test.ts spawns 4
 * whole binaries once.
 *
 * The model endpoint holds every request of a trial until the other three racers have answered:
 * the racer that runs keeps its lock until then, however slowly the others reach theirs on a
 * busy machine, so "exactly one runs" does not depend on timing. (If two ran, both would wait
 * there; the gate also opens after GATE_FALLBACK_MS so that failure is reported, not hung.)
 * Trials run in LANES at once — each lane its own 4 racers, endpoint and gate, racing on its own
 * batch or session — so the 2 cores stay busy while a lane's winner waits on its requests.
 */
const TRIALS = 50;
const RACERS = 4;
const ITEMS = 2;
const GATE_FALLBACK_MS = 20_000;
const RACER = fileURLToPath(new URL("./cli-racer.mjs", import.meta.url));

interface Answer {
  readonly trial: number;
  readonly pid: number;
  readonly code?: number;
  readonly stdout?: string;
  readonly stderr?: string;
  readonly ready?: boolean;
}

/** 4 racers with their own model endpoint, whose gate holds a trial's model requests. */
class Lane {
  #open: () => void = () => {};
  #gate: Promise<void> = Promise.resolve();
  private constructor(
    readonly racers: Racer<Answer>[],
    readonly endpoint: EndpointInFront,
    /** The racers' stderr. */
    readonly errors: string[],
  ) {}

  static async start(simUrl: string): Promise<Lane> {
    let lane: Lane | undefined;
    const endpoint = await endpointInFront(simUrl, async (req) => {
      // Model turns only: a resume may count tokens (its budget's estimate) before it locks.
      if (lane !== undefined && req.url?.split("?")[0] === "/v1/messages") await lane.#gate;
      return false;
    });
    const errors: string[] = [];
    lane = new Lane(await startRacers<Answer>(RACER, RACERS, errors), endpoint, errors);
    return lane;
  }

  closeGate(): void {
    this.#gate = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, GATE_FALLBACK_MS);
      this.#open = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  openGate(): void {
    this.#open();
  }

  async stop(): Promise<void> {
    await stopRacers(this.racers);
    this.openGate();
    await this.endpoint.close();
  }
}

let dir: string;
let sim: SimHandle;
/** Two lanes share the batch trials; the third runs the session's. */
let lanes: Lane[] = [];
let deadPid: number;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-locks-race-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < ITEMS; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
  // A reaped process: its pid is free, as a kill -9'd owner's is.
  deadPid = Number(spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout);
  sim = await startSimInProcess(dir);
  lanes = await Promise.all([0, 1, 2].map(() => Lane.start(sim.url)));
}, 60_000);
afterAll(async () => {
  await Promise.all(lanes.map((lane) => lane.stop()));
  await sim?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** The one line a refused resume prints: what is in use, by whom, and the fix. */
const refusal = (what: string) =>
  new RegExp(
    `^forkloop: ${what} is in use by process \\d+ on \\S+ since \\S+ \\(.+\\)\\. Wait for it to finish, or stop it \\(kill \\d+\\) and run the command again\\.$`,
  );

/**
 * Runs `forkloop <args>` (or each racer its own) in every racer at one instant; checks exactly one exited 0 and the rest
 * exited 2 with the one line naming the one that ran. Returns the answer of the one that ran.
 */
async function race(
  lane: Lane,
  trial: number,
  args: readonly string[] | readonly (readonly string[])[],
  expected: RegExp,
): Promise<Answer> {
  lane.closeGate();
  const at = Date.now() + 40;
  const argsOf = (index: number) => (typeof args[0] === "string" ? args : args[index]);
  for (const [index, racer] of lane.racers.entries())
    racer.send({ trial, args: argsOf(index), cwd: dir, env: lane.endpoint.env, at });
  let settled = 0;
  const answers = await Promise.all(
    lane.racers.map(async (racer) => {
      let answer = await racer.next();
      // A trial that failed leaves its racers' late answers behind: not this trial's.
      while (answer.trial !== trial) answer = await racer.next();
      if (++settled === RACERS - 1) lane.openGate();
      return answer;
    }),
  );
  lane.openGate();
  const detail = `trial ${trial}: ${JSON.stringify(answers, null, 1)}\n${lane.errors.join("")}`;
  const ran = answers.filter((answer) => answer.code === 0);
  const refused = answers.filter((answer) => answer.code === 2);
  expect(ran, detail).toHaveLength(1);
  expect(refused, detail).toHaveLength(RACERS - 1);
  const winner = ran[0]!;
  // A `--repair` holds the lock while it checks the transcript, then lets it go and locks again
  // for its turn: one that lost the race that way says what it found first, and the others may
  // have met its lock instead of the winner's.
  const repaired = /^forkloop: \S+\.fltr is not damaged; nothing to repair$/;
  const owners = new Set([
    winner.pid,
    ...answers.filter((answer) => repaired.test(answer.stderr?.split("\n")[0] ?? "")).map((a) => a.pid),
  ]);
  for (const answer of refused) {
    const lines = (answer.stderr?.trimEnd().split("\n") ?? []).filter((line) => !repaired.test(line));
    expect(lines, detail).toHaveLength(1);
    expect(lines[0], detail).toMatch(expected);
    const owner = Number(/is in use by process (\d+) on /.exec(lines[0] ?? "")?.[1]);
    expect(owners.has(owner), detail).toBe(true);
    expect(lines[0], detail).toContain(`(kill ${owner})`);
    expect(answer.stdout, detail).toBe("");
  }
  return winner;
}

/** A copy of the batch `template` as batch `id`: every item pending; even trials leave a kill -9'd owner's lock. */
async function copyBatch(template: string, id: string, trial: number): Promise<string> {
  const batchDir = batchStateDir(dir, id);
  await cp(template, batchDir, { recursive: true });
  const spec = JSON.parse(await readFile(join(batchDir, "batch.json"), "utf8")) as Record<string, unknown>;
  await writeFile(join(batchDir, "batch.json"), JSON.stringify({ ...spec, id, outputDir: batchDir }));
  if (trial % 2 === 0) {
    await writeFile(
      join(batchDir, LOCK_FILE),
      JSON.stringify({
        instance: `killed-${trial}`,
        ...procProbe.self(),
        pid: deadPid,
        since: "2026-01-01T00:00:00.000Z",
        command: `forkloop batch --resume ${id}`,
      }),
    );
  }
  return batchDir;
}

/** The user prompts a request's conversation holds. */
function userTexts(rawBody: string): string[] {
  const body = JSON.parse(rawBody) as { messages?: { role: string; content: unknown }[] };
  return (body.messages ?? [])
    .filter((message) => message.role === "user")
    .flatMap((message) =>
      typeof message.content === "string"
        ? [message.content]
        : (message.content as { type: string; text?: string }[]).flatMap((block) =>
            block.type === "text" && block.text !== undefined ? [block.text] : [],
          ),
    );
}

describe.concurrent("R-R5 chaos: 4 simultaneous CLI resumes in 4 processes, 50 trials each", () => {
  it("one batch: exactly one `batch --resume` runs each time, the others exit 2 naming it; 0 items completed twice", async () => {
    // One batch left with every item pending (stopped at its budget before any started), copied
    // once per trial.
    const template = await runCliInProcess(
      [
        "batch",
        "--files",
        "src/*.ts",
        "--prompt",
        "Summarize {{file}}",
        "--id",
        "t-0",
        "--max-budget-usd",
        "0.0000001",
      ],
      { cwd: dir, env: sim.env },
    );
    expect(template.code, template.stderr).toBe(10);
    let takenOver = 0;
    const trials = async (lane: Lane, first: number) => {
      for (let trial = first; trial <= TRIALS; trial += 2) {
        const id = `t-${trial}`;
        const batchDir = await copyBatch(batchStateDir(dir, "t-0"), id, trial);
        const winner = await race(
          lane,
          trial,
          ["batch", "--resume", id, "--max-budget-usd", "100", "--concurrency", "1"],
          refusal(`batch ${id}`),
        );
        expect(winner.stdout).toContain(`${ITEMS} items: ${ITEMS} succeeded, 0 failed`);
        if (/took over the lock of process \d+ .*, as process \d+ is gone/.test(winner.stderr ?? ""))
          takenOver++;
        const { records } = await readJournal(batchDir);
        const completed = records.filter((record) => record.type === "completed").map((record) => record.id);
        expect(completed, `trial ${trial}`).toHaveLength(ITEMS);
        expect(new Set(completed).size, `trial ${trial}`).toBe(ITEMS);
      }
    };
    await Promise.all([trials(lanes[0]!, 1), trials(lanes[1]!, 2)]);
    // Every kill -9'd owner's lock was taken over by the one that ran.
    expect(takenOver).toBe(TRIALS / 2);
  }, 180_000);

  it("one session: exactly one `run --resume S` runs each time, the others exit 2 naming it; so with `-c` and `--repair` in the race; the session stays whole", async () => {
    const lane = lanes[2]!;
    const first = await runCliInProcess(["run", "Summarize src/f0.ts", "--output-format", "stream-json"], {
      cwd: dir,
      env: sim.env,
    });
    expect(first.code, first.stderr).toBe(0);
    const sessionId = streamJsonLines(first.stdout)[0]?.session_id ?? "";
    for (let trial = 1; trial <= TRIALS; trial++)
      await race(
        lane,
        trial,
        ["run", "--resume", sessionId, `Say hello ${trial}.`],
        refusal(`session ${sessionId}`),
      );
    // The session's other ways in, racing a resume: `-c` (the latest session: this one) and
    // `--repair` (it must not rewrite a transcript another process writes) are refused alike.
    const MIXED = 10;
    for (let trial = 1; trial <= MIXED; trial++) {
      const prompt = `Mixed ${trial}.`;
      const commands = [
        ["run", "-c", prompt],
        ["run", "--resume", sessionId, "--repair", prompt],
        ["run", "--resume", sessionId, prompt],
        ["run", "--continue", prompt],
      ];
      await race(
        lane,
        TRIALS + trial,
        trial % 2 === 0 ? commands.reverse() : commands,
        refusal(`session ${sessionId}`),
      );
    }
    // Whole: each trial's prompt is in the conversation once, in order, and the API's rules still
    // hold for the next resume (the simulator answers a broken conversation with a 400, exit 4).
    const after = await runCliInProcess(["run", "--resume", sessionId, "Say goodbye."], {
      cwd: dir,
      env: sim.env,
    });
    expect(after.code, after.stderr).toBe(0);
    const last = (await sim.requests())
      .filter((record) => record.querySource === "sdk" && userTexts(record.rawBody).includes("Say goodbye."))
      .at(-1);
    expect(userTexts(last?.rawBody ?? "{}").filter((text) => /^(Say hello|Mixed) \d+\.$/.test(text))).toEqual(
      [
        ...Array.from({ length: TRIALS }, (_, n) => `Say hello ${n + 1}.`),
        ...Array.from({ length: MIXED }, (_, n) => `Mixed ${n + 1}.`),
      ],
    );
  }, 180_000);
});
