import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type BatchSpec,
  connectQueue,
  ITEMS_QUEUE,
  itemJobId,
  type JobItem,
  openQueueLedger,
  parseQueueUrl,
  QUEUE_PREFIX,
  readBatchState,
} from "@forkloop/batch";
import {
  batchStateDir,
  type RedisServer,
  runCliInProcess,
  type SimHandle,
  startCli,
  startRedisServer,
  startSimInProcess,
  stopStarted,
  waitForOutput,
} from "@forkloop/cli/testing";
import { createOutsideDir, type TempWorkspace } from "@forkloop/tools/testing";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-B1 (trust): whoever can write to a worker's Redis chooses a batch's settings, so the
 * settings are written here as an attacker would — straight into the keys queue-store.ts reads
 * (`forkloop:batch:<id>:settings` / `:items`) — and served by spawned built `forkloop worker`
 * processes on one real redis-server: a cautious worker on DB 0 and one started with
 * --allow-dangerously-skip-permissions on DB 1, both with `--sandbox on` and this host's own
 * deny rules (the project's and the user's settings). Assertions are on the worker project's
 * filesystem, on what the simulator was sent (`/_sim/requests`) and on the recorded results.
 */

let root: string;
let project: string;
let home: string;
let outside: string;
/** Where bubblewrap does not hide it (not under /tmp), so "nothing escaped" can fail (R-S9). */
let outsideDir: TempWorkspace;
let redis: RedisServer;
let sim: SimHandle;
let cautiousDb: Redis;
let trustingDb: Redis;
/** Serves DB 0 for the whole file: no opt-in, so it must refuse bypass batches. */
let cautious: ReturnType<typeof startCli>;
/** Serves DB 1: its operator opted in to bypassPermissions batches. */
let trusting: ReturnType<typeof startCli>;
const started: ReturnType<typeof startCli>[] = [];

/** The item prompts: each scenario rule answers one of them with the tool calls of its case. */
const write = (file_path: string, content: string) => ({
  type: "tool_use",
  name: "Write",
  input: { file_path, content },
});
const bash = (command: string) => ({ type: "tool_use", name: "Bash", input: { command } });

/** Writes outside the workspace through a program, where only the sandbox can stop it. */
const escapeCommand = () => `node -e "require('fs').writeFileSync('${join(outside, "escaped.txt")}', 'x')"`;

function scenario() {
  const rule = (text: string, content: unknown[]) => ({
    match: { turn: 0, lastUserText: text },
    reply: { content },
  });
  return {
    rules: [
      rule("case bypass-refused", [write("bypass-refused.txt", "ran")]),
      rule("case any-refused", [write("refused.txt", "ran")]),
      rule("case widen", [
        write("secret/widened.txt", "leak"),
        bash("rm keep.txt"),
        write("allowed.txt", "the batch's own allow rule"),
      ]),
      rule("case bypass-held", [
        write("secret/bypassed.txt", "leak"),
        bash("rm keep.txt"),
        // The permission engine cannot see this path; only the sandbox stands between it and the host.
        bash(escapeCommand()),
        write("bypassed.txt", "bypass ran"),
      ]),
      rule("case well-formed", [write("done.txt", "served")]),
    ],
    fallback: { content: [{ type: "text", text: "done (scripted by the simulator)" }] },
  };
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-worker-trust-"));
  project = join(root, "project");
  home = join(root, "home");
  outsideDir = createOutsideDir("forkloop-worker-trust-outside-");
  outside = outsideDir.root;
  for (const dir of [join(project, ".forkloop"), join(project, "secret"), join(home, ".forkloop")])
    await mkdir(dir, { recursive: true });
  // The worker host's own rules: the project's deny rule is kept though the project is not
  // trusted (a project may narrow, R-S5); the user's deny rule is trusted as it is.
  await writeFile(
    join(project, ".forkloop", "settings.json"),
    JSON.stringify({ permissions: { deny: ["Write(secret/**)", "Edit(secret/**)"] } }),
  );
  await writeFile(
    join(home, ".forkloop", "settings.json"),
    JSON.stringify({ permissions: { deny: ["Bash(rm:*)"] } }),
  );
  await writeFile(join(project, "keep.txt"), "keep me\n");
  await writeFile(join(root, "scenario.json"), JSON.stringify(scenario()));
  [redis, sim] = await Promise.all([
    startRedisServer(),
    startSimInProcess(root, ["--scenario", "scenario.json"]),
  ]);
  cautiousDb = await connectQueue(parseQueueUrl(redis.url));
  trustingDb = await connectQueue(parseQueueUrl(`${redis.url}/1`));
  cautious = startWorker(redis.url);
  trusting = startWorker(`${redis.url}/1`, ["--allow-dangerously-skip-permissions"]);
  for (const worker of [cautious, trusting])
    await waitForOutput(worker.child, worker.stderr, (text) => text.includes("running items from"));
});

afterAll(async () => {
  await stopStarted(started);
  cautiousDb?.disconnect();
  trustingDb?.disconnect();
  await sim?.stop();
  await redis?.stop();
  await rm(root, { recursive: true, force: true });
  outsideDir?.cleanup();
});

function startWorker(url: string, extra: readonly string[] = []) {
  const worker = startCli(["worker", "--queue", url, "--cwd", project, "--sandbox", "on", ...extra], {
    cwd: root,
    env: { ...sim.env, HOME: home },
  });
  started.push(worker);
  return worker;
}

/** A batch's settings as `forkloop batch --queue` stores them, for the cases to spoil. */
function settings(id: string, spec: { readonly [K in keyof BatchSpec]?: unknown } = {}) {
  const valid: BatchSpec = {
    id,
    createdAt: "2026-12-01T12:00:00.000Z",
    cwd: project,
    source: { kind: "items", path: join(root, "items.jsonl") },
    prompt: "{{item}}",
    model: "claude-sonnet-4-6",
    maxTurns: 4,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "dontAsk",
    fallbackModels: [],
    outputDir: join(root, "out"),
  };
  return { spec: { ...valid, ...spec }, attempts: 3, backoffMs: 60_000 };
}

/**
 * Writes the batch into Redis as an attacker with write access would: the settings text as it
 * is, then the flow. The long retry delay makes an item that is retried (not failed outright)
 * sit "delayed" for a minute, which the tests tell apart from "failed".
 */
async function enqueueRaw(db: Redis, id: string, settingsText: string, prompt: string): Promise<JobItem> {
  const item: JobItem = { id: `${id}-1`, label: id, prompt };
  await db.set(`forkloop:batch:${id}:settings`, settingsText);
  await db.set(`forkloop:batch:${id}:items`, JSON.stringify([item]));
  await openQueueLedger(db, settings(id) as never, redis.url).enqueue([item]);
  return item;
}

async function settled(db: Redis, id: string, within = 20_000) {
  const deadline = Date.now() + within;
  for (;;) {
    const [state] = (await readBatchState(db, id)).states;
    if (state !== undefined && state.status !== "pending") return state;
    if (Date.now() > deadline) throw new Error(`batch ${id} not settled; workers printed:\n${printed()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const printed = () => started.map((cli) => cli.stderr()).join("\n---\n");

async function jobState(db: Redis, batchId: string, itemId: string): Promise<string> {
  const queue = new Queue(ITEMS_QUEUE, { connection: db, prefix: QUEUE_PREFIX });
  try {
    const job = await queue.getJob(itemJobId(batchId, itemId));
    return job === undefined ? "missing" : await job.getState();
  } finally {
    await queue.close();
  }
}

/** What the simulator was sent for the items whose prompt holds `text`. */
async function requestsFor(text: string): Promise<{ messages: { role: string; content: unknown }[] }[]> {
  return (await sim.requests())
    .filter((request) => request.path === "/v1/messages" && request.rawBody.includes(text))
    .map((request) => JSON.parse(request.rawBody) as { messages: { role: string; content: unknown }[] });
}

/** The tool results the model got back in the item's last request, by tool call order. */
async function toolResults(text: string): Promise<{ is_error?: boolean; content: unknown }[]> {
  const last = (await requestsFor(text)).at(-1);
  const blocks = (last?.messages.at(-1)?.content ?? []) as {
    type: string;
    is_error?: boolean;
    content: unknown;
  }[];
  return blocks.filter((block) => block.type === "tool_result");
}

describe("R-B1 (trust): forkloop worker treats a queued batch's settings as hostile input (built CLI, real Redis)", () => {
  it("R-B1: a cautious worker fails the items of a bypass batch, an unknown mode, a huge maxTurns, a bad rule, a foreign or malformed settings key, and bad job data — recording why, never asking the model, never retried — and serves a well-formed batch after", async () => {
    const hostile: [id: string, text: string, named: string][] = [
      [
        "bypass",
        JSON.stringify(settings("bypass", { permissionMode: "bypassPermissions" })),
        "this worker runs such batches only when started with --allow-dangerously-skip-permissions",
      ],
      [
        "mode",
        JSON.stringify(settings("mode", { permissionMode: "yolo" })),
        "spec.permissionMode: must be one of",
      ],
      ["turns", JSON.stringify(settings("turns", { maxTurns: 1e9 })), "spec.maxTurns"],
      ["rule", JSON.stringify(settings("rule", { allowedTools: ["Bash(curl:*"] })), "spec.allowedTools.0"],
      ["foreign", JSON.stringify(settings("widen-copy")), 'its settings are batch "widen-copy"\'s'],
      ["malformed", '{"spec": {"id": "malformed", ', "its settings are not JSON"],
    ];
    const items = await Promise.all(
      hostile.map(([id, text]) => enqueueRaw(cautiousDb, id, text, `case any-refused (${id})`)),
    );
    // Job data that names a path for an item id: the id becomes a transcript file name.
    const items_ = new Queue(ITEMS_QUEUE, { connection: cautiousDb, prefix: QUEUE_PREFIX });
    await items_.add(
      "item",
      {
        batchId: "well-formed",
        item: { id: "../../../escaped", label: "x", prompt: "case any-refused (job)" },
      },
      { jobId: "hand-written", attempts: 3, backoff: { type: "fixed", delay: 60_000 } },
    );
    await items_.close();

    const worker = cautious;
    for (const [[id, , named], item] of hostile.map((entry, index) => [entry, items[index]] as const)) {
      const state = await settled(cautiousDb, id);
      expect(state.status, id).toBe("failed");
      expect(state.error?.code, id).toBe("batch_refused");
      expect(state.error?.message, id).toContain(`batch ${id} is not run by this worker`);
      expect(state.error?.message, id).toContain(named);
      // UnrecoverableError: failed outright, not waiting out the 60 s retry delay.
      // The item's state is recorded before BullMQ moves the job on: wait while it is still active.
      let job = await jobState(cautiousDb, id, item?.id ?? "");
      for (let tries = 0; tries < 200 && job === "active"; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        job = await jobState(cautiousDb, id, item?.id ?? "");
      }
      expect(job, id).toBe("failed");
    }
    // One line per refused batch in the worker's log, and the worker still running.
    for (const [id] of hostile) {
      // The worker records the refusal in Redis before its log line crosses the pipe.
      await waitForOutput(worker.child, worker.stderr, (text) =>
        text.includes(`batch ${id}: not served here`),
      );
      const lines = worker
        .stderr()
        .split("\n")
        .filter((line) => line.startsWith(`batch ${id}: not served here`));
      expect(lines, id).toHaveLength(1);
    }
    await waitForOutput(worker.child, worker.stderr, (text) =>
      text.includes("job hand-written is not an item"),
    );
    expect(worker.child.exitCode).toBeNull();
    // The model was never asked for any of them, and nothing they asked for was written.
    expect(await requestsFor("case any-refused")).toEqual([]);
    expect(existsSync(join(project, "refused.txt"))).toBe(false);

    // A well-formed batch after them: served by the same worker.
    await enqueueRaw(
      cautiousDb,
      "well-formed",
      JSON.stringify(settings("well-formed", { allowedTools: ["Write(done.txt)"] })),
      "case well-formed",
    );
    const served = await settled(cautiousDb, "well-formed");
    expect(served.status, printed()).toBe("succeeded");
    expect(await readFile(join(project, "done.txt"), "utf8")).toBe("served");
    expect(existsSync(join(project, "escaped-1.jsonl"))).toBe(false);
  }, 60_000);

  it("R-B1: allow rules of a batch cannot widen what the host's project and user deny rules forbid; its own allow rules still apply", async () => {
    await enqueueRaw(
      cautiousDb,
      "widen",
      JSON.stringify(
        settings("widen", {
          allowedTools: ["Write(secret/**)", "Write", "Bash(rm:*)", "Bash"],
          disallowedTools: [],
        }),
      ),
      "case widen",
    );
    const state = await settled(cautiousDb, "widen");
    expect(state.status, printed()).toBe("succeeded");
    expect(existsSync(join(project, "secret", "widened.txt"))).toBe(false);
    expect(await readFile(join(project, "keep.txt"), "utf8")).toBe("keep me\n");
    expect(await readFile(join(project, "allowed.txt"), "utf8")).toBe("the batch's own allow rule");
    const results = await toolResults("case widen");
    expect(results.map((result) => result.is_error === true)).toEqual([true, true, false]);
  }, 30_000);

  it("R-B1: forkloop batch refuses, before enqueueing, settings a worker would refuse (a model id with a space or a control character): exit 2 naming the field", async () => {
    const producerDir = join(root, "producer-bad");
    await mkdir(producerDir, { recursive: true });
    await writeFile(join(producerDir, "items.jsonl"), `${JSON.stringify("x")}\n`);
    for (const model of ["claude sonnet", "claude\u001b[2J"]) {
      const refused = await runCliInProcess(
        ["batch", "--items", "items.jsonl", "--prompt", "{{item}}", "--queue", redis.url, "--model", model],
        { cwd: producerDir, env: sim.env },
      );
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain("the batch's settings are not valid: model: must be a model id");
    }
  }, 30_000);

  it("R-B1: bypassPermissions: refused by a worker without the opt-in (the producer says workers must opt in); with it, the host's deny rules, its sandbox and its --cwd hold whatever the stored settings say", async () => {
    // The producer side, through the CLI: the notice, and the refusal in its results.
    const producerDir = join(root, "producer");
    await mkdir(producerDir, { recursive: true });
    await writeFile(join(producerDir, "items.jsonl"), `${JSON.stringify("case bypass-refused")}\n`);
    const producer = await runCliInProcess(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "{{item}}",
        "--queue",
        redis.url,
        "--id",
        "bypass-cli",
        "--permission-mode",
        "bypassPermissions",
      ],
      { cwd: producerDir, env: sim.env },
    );
    expect(producer.code, producer.stderr).toBe(7);
    expect(producer.stderr).toContain(
      "only workers started with `forkloop worker --allow-dangerously-skip-permissions` run its items",
    );
    const results = await readFile(join(batchStateDir(producerDir, "bypass-cli"), "results.jsonl"), "utf8");
    expect(results).toContain("--allow-dangerously-skip-permissions");
    expect(await requestsFor("case bypass-refused")).toEqual([]);
    expect(existsSync(join(project, "bypass-refused.txt"))).toBe(false);

    // A worker whose operator opted in, on DB 1; the stored settings also ask for no sandbox and
    // another directory, which no worker reads.
    const stored = settings("bypass-held", { permissionMode: "bypassPermissions", cwd: outside });
    await enqueueRaw(
      trustingDb,
      "bypass-held",
      JSON.stringify({ ...stored, sandbox: "off", spec: { ...stored.spec, sandbox: "off" } }),
      "case bypass-held",
    );
    const state = await settled(trustingDb, "bypass-held");
    expect(state.status, printed()).toBe("succeeded");
    expect(trusting.stderr()).toContain("bypassPermissions batches run here");
    expect(existsSync(join(project, "secret", "bypassed.txt"))).toBe(false);
    expect(await readFile(join(project, "keep.txt"), "utf8")).toBe("keep me\n");
    expect(existsSync(join(outside, "escaped.txt"))).toBe(false);
    // Control: the same command without the sandbox does write there.
    execFileSync("sh", ["-c", escapeCommand()]);
    expect(existsSync(join(outside, "escaped.txt"))).toBe(true);
    expect(await readFile(join(project, "bypassed.txt"), "utf8")).toBe("bypass ran");
    expect(existsSync(join(outside, "bypassed.txt"))).toBe(false);
    const held = await toolResults("case bypass-held");
    expect(held.map((result) => result.is_error === true)).toEqual([true, true, true, false]);
  }, 60_000);
});
