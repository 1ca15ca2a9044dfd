import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  type CliOptions,
  type RedisServer,
  type StartedCli,
  startCli,
  startRedisServer,
  startTracked,
  stopStarted,
  writeTaskItems,
} from "@forkloop/cli/testing";
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";

/** Short locks so a killed worker's items come back within seconds (the defaults are 30 s). */
const FAST_LOCKS = ["--lock-duration", "2000", "--stalled-interval", "1000"];

/**
 * One test file's queue (R-B1): a real redis-server on a free port for the file, a temp directory
 * per test, and the workers and producers a test spawns (built CLIs with their embedded
 * simulator), all stopped after each test — one left waiting on the queue by a test that timed
 * out ran on for an hour. Read the fields inside tests.
 */
export interface QueueCli {
  readonly redis: RedisServer;
  /** This test's directory (the items, the producer's state). */
  readonly dir: string;
  /** The workers started by this test, in order. */
  readonly workers: readonly StartedCli[];
  /** `forkloop worker --queue <redis> --concurrency 6` with short locks, plus `extra`, in `dir`. */
  startWorker(extra?: readonly string[], env?: Record<string, string>): StartedCli;
  startProducer(args: readonly string[], options: CliOptions): StartedCli;
  runProducer(args: readonly string[], options: CliOptions): StartedCli["exited"];
  /** SIGTERM to every worker still running; waits for all of them to end. */
  stopWorkers(): Promise<void>;
  writeItems(count: number): Promise<void>;
  /** The batch's results.jsonl, one object a line (the producer's state under `root`). */
  readResults(batchId: string, root?: string): Promise<Record<string, unknown>[]>;
}

export function useQueueCli(): QueueCli {
  let redis: RedisServer | undefined;
  let dir = "";
  const workers: StartedCli[] = [];
  const producers: StartedCli[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    await redis?.stop();
  });
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), "forkloop-queue-"));
  });
  afterEach(async () => {
    await stopStarted(workers);
    await stopStarted(producers);
    await rm(dir, { recursive: true, force: true });
  });
  const started = (): RedisServer => {
    if (redis === undefined) throw new Error("useQueueCli: read the queue inside a test");
    return redis;
  };
  const startProducer = (args: readonly string[], options: CliOptions) =>
    startTracked(producers, args, options);
  return {
    get redis() {
      return started();
    },
    get dir() {
      return dir;
    },
    workers,
    startWorker(extra = [], env = {}) {
      const args = ["worker", "--queue", started().url, "--concurrency", "6", ...FAST_LOCKS, ...extra];
      const worker = startCli(args, { cwd: dir, env });
      workers.push(worker);
      return worker;
    },
    startProducer,
    runProducer: (args, options) => startProducer(args, options).exited,
    async stopWorkers() {
      for (const worker of workers) if (worker.child.exitCode === null) worker.child.kill("SIGTERM");
      await Promise.all(workers.map((worker) => worker.exited));
    },
    writeItems: (count) => writeTaskItems(dir, count),
    async readResults(batchId, root = dir) {
      const text = await readFile(join(batchStateDir(root, batchId), "results.jsonl"), "utf8");
      return text
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
  };
}
