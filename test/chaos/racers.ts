import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const REPO = fileURLToPath(new URL("../..", import.meta.url));

/**
 * A long-lived racer process of the R-R5 lock races (lock-racer.mjs, cli-racer.mjs): commands go
 * to its stdin as JSON lines, one JSON line answers each, in order.
 */
export class Racer<Answer> {
  readonly #answers: Answer[] = [];
  readonly #waiting: ((answer: Answer) => void)[] = [];
  constructor(readonly child: ChildProcess) {
    createInterface({ input: child.stdout! }).on("line", (line) => {
      const answer = JSON.parse(line) as Answer;
      const waiter = this.#waiting.shift();
      if (waiter) waiter(answer);
      else this.#answers.push(answer);
    });
  }
  send(command: Record<string, unknown>): void {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
  }
  next(): Promise<Answer> {
    const queued = this.#answers.shift();
    return queued ? Promise.resolve(queued) : new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/**
 * Starts `count` racers of `script` (each a process of the BUILT packages) and waits for each
 * one's first line (it is ready); their stderr goes to `errors`.
 */
export async function startRacers<Answer>(
  script: string,
  count: number,
  errors: string[],
): Promise<Racer<Answer>[]> {
  const racers = Array.from({ length: count }, () => {
    // A clean environment: vitest's `--conditions source` must not reach the racers (built code).
    const child = spawn(process.execPath, [script], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stderr!.on("data", (chunk: Buffer) => errors.push(chunk.toString()));
    return new Racer<Answer>(child);
  });
  await Promise.all(racers.map((racer) => racer.next()));
  return racers;
}

/** Ends the racers (their stdin closes, so they finish) and waits until every one has exited. */
export async function stopRacers<Answer>(racers: readonly Racer<Answer>[] | undefined): Promise<void> {
  for (const racer of racers ?? []) racer.child.stdin!.end();
  await Promise.all(
    (racers ?? []).map((racer) =>
      racer.child.exitCode !== null || racer.child.signalCode !== null
        ? undefined
        : new Promise((resolve) => racer.child.on("close", resolve)),
    ),
  );
}
