import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { batchStateDir, runCliInProcess, streamJsonLines } from "@forkloop/cli/testing";
import { createAgentState, createUserMessage, query, type Terminal } from "@forkloop/loop-core";
import {
  HOSTILE_KINDS,
  type HostileBehaviour,
  type HostileKind,
  type HostileServer,
  startHostileServer,
} from "@forkloop/loop-core/testing";
import { StreamJsonWriter, streamJsonLineSchema } from "@forkloop/sdk";
import { createBuiltinTools } from "@forkloop/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inParallel, seeded, spread } from "./seeded.js";

/**
 * R-R1–R-R3 chaos, hostile half: sessions against a model server that misbehaves on purpose — each
 * request draws one behaviour (seeded) from the hostile server's list. In-process sessions run
 * loop-core's query() over real HTTP with the built-in tools in a temp dir; the others are
 * `forkloop run` and `forkloop batch` through the command line (in this process). Every session must end with a typed result line, within
 * its deadlines, having sent no request that breaks the API's tool rules.
 */
const SEED = 1_107;
const SESSIONS = 300;
const MAX_TURNS = 4;
const retry = {
  headersTimeoutMs: 2_000,
  streamIdleTimeoutMs: 2_000,
  // R-R11: a drip (one event inside the idle timeout, for ever) ends only at this deadline.
  attemptTimeoutMs: 2_000,
  maxRetries: 3,
  baseDelayMs: 5,
  maxDelayMs: 20,
};
/** The most requests one session can make: every turn's request retried to the end. */
const MAX_CALLS = MAX_TURNS * (retry.maxRetries + 1);
/**
 * Deadlines generous enough for a loaded CI machine (an event-loop stall must not look like a
 * silent server). Far past the worst case, every attempt waiting out a deadline, a session that is
 * still running is hung.
 */
const HANG_MS = MAX_CALLS * (retry.headersTimeoutMs + 100) + 10_000;

/** ok replies most of the time (a session must be able to finish), every attack in between. */
function drawBehaviour(random: () => number, leaveOut: readonly HostileKind[] = []): HostileBehaviour {
  if (random() < 0.35) return { kind: "ok" };
  const kinds = HOSTILE_KINDS.filter((kind) => kind !== "ok" && !leaveOut.includes(kind));
  const kind = kinds[Math.floor(random() * kinds.length)] as Exclude<HostileKind, "ok">;
  switch (kind) {
    case "drop_after":
      return { kind, events: 1 + Math.floor(random() * 6) };
    case "ping_only":
    case "drip":
      return { kind, intervalMs: 50 };
    default:
      return { kind };
  }
}

let server: HostileServer;
let dir: string;
beforeAll(async () => {
  const random = seeded(SEED);
  server = await startHostileServer({
    behaviour: () => drawBehaviour(random),
    // Read-only and concurrency-safe, so the attacks reach the streaming executor too.
    toolUse: { name: "Glob", input: { pattern: "*.md" } },
  });
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-hostile-"));
  await writeFile(join(dir, "README.md"), "# chaos\n");
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

type Outcome = { session: string; terminal?: Terminal; crash?: string; hung?: boolean; lineOk: boolean };

async function session(index: number): Promise<Outcome> {
  const id = `s${index}`;
  const client = new Anthropic({
    apiKey: "test-key",
    baseURL: server.url,
    maxRetries: 0,
    defaultHeaders: { "x-hostile-session": id },
    // The SDK logs every unparsable SSE event with its chunk; the test counts them instead.
    logLevel: "off",
  });
  const abortController = new AbortController();
  const writer = new StreamJsonWriter({ sessionId: id });
  const run = (async () => {
    const generator = query({
      messages: [createUserMessage("List the markdown files.")],
      systemPrompt: "You are a test agent.",
      toolUseContext: {
        cwd: dir,
        workspaceRoots: [dir],
        tools: createBuiltinTools(),
        abortController,
        agentId: "main",
        agentState: createAgentState(),
        options: { model: "claude-sonnet-4-6", permissionMode: "bypassPermissions" },
      },
      querySource: "sdk",
      client,
      retry,
      maxTurns: MAX_TURNS,
    });
    let step = await generator.next();
    while (!step.done) {
      for (const line of writer.lines(step.value)) streamJsonLineSchema.parse(line);
      step = await generator.next();
    }
    return step.value;
  })();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), HANG_MS);
  });
  try {
    const ended = await Promise.race([run, hang]);
    if (ended === "hung") {
      abortController.abort("hung");
      return { session: id, hung: true, lineOk: false };
    }
    const line = writer.result(ended, { durationMs: 0, permissionDenials: [] });
    return { session: id, terminal: ended, lineOk: streamJsonLineSchema.safeParse(line).success };
  } catch (error) {
    return {
      session: id,
      crash: error instanceof Error ? (error.stack ?? error.message) : String(error),
      lineOk: false,
    };
  } finally {
    clearTimeout(timer);
  }
}

describe("R-R1–R-R3 chaos: a hostile model server", () => {
  it(`${SESSIONS} seeded in-process sessions: no crash, no hang, a typed result each, the API's tool rules kept`, async () => {
    const outcomes = await inParallel(
      128,
      Array.from({ length: SESSIONS }, (_, index) => () => session(index)),
    );
    const records = server.requests().filter((record) => record.session.startsWith("s"));
    const calls = new Map<string, number>();
    for (const record of records) calls.set(record.session, (calls.get(record.session) ?? 0) + 1);
    const reasons: Record<string, number> = {};
    for (const outcome of outcomes) {
      const reason = outcome.terminal?.reason ?? (outcome.hung ? "HUNG" : "CRASH");
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
    const kinds: Record<string, number> = {};
    for (const record of records) kinds[record.kind] = (kinds[record.kind] ?? 0) + 1;
    const violations = records.flatMap((record) => record.violations);
    console.log(
      `chaos/hostile: ${SESSIONS} sessions, ${records.length} requests; terminals ${JSON.stringify(reasons)}; ` +
        `API calls per session ${JSON.stringify(spread([...calls.values()]))} (bound ${MAX_CALLS}); ` +
        `crashes ${outcomes.filter((o) => o.crash).length}, hangs ${outcomes.filter((o) => o.hung).length}, ` +
        `tool-rule violations ${violations.length}; behaviours ${JSON.stringify(kinds)}`,
    );
    expect(outcomes.filter((outcome) => outcome.crash).map((outcome) => outcome.crash)).toEqual([]);
    expect(outcomes.filter((outcome) => outcome.hung)).toEqual([]);
    expect(outcomes.every((outcome) => outcome.lineOk)).toBe(true);
    expect(violations).toEqual([]);
    expect(Math.max(...calls.values())).toBeLessThanOrEqual(MAX_CALLS);
    // Every behaviour was drawn (the seed covers the whole list).
    expect(Object.keys(kinds).sort()).toEqual([...HOSTILE_KINDS].sort());
  }, 120_000);
});

describe("R-R1–R-R3 chaos: each hostile behaviour against the CLI", () => {
  it.each(HOSTILE_KINDS.filter((kind) => kind !== "ok"))(
    "forkloop run: %s on the first request ends with a typed result line (no crash, no stack)",
    async (kind) => {
      const first: HostileBehaviour =
        kind === "drop_after"
          ? { kind, events: 3 }
          : kind === "ping_only" || kind === "drip"
            ? { kind, intervalMs: 50 }
            : { kind };
      const own = await startHostileServer({
        behaviour: ({ index }) => (index === 1 ? first : { kind: "ok", text: "recovered" }),
        toolUse: { name: "Glob", input: { pattern: "*.md" } },
      });
      try {
        const result = await runCliInProcess(
          [
            "run",
            "List the markdown files.",
            "--output-format",
            "stream-json",
            "--idle-timeout",
            "0.5",
            "--headers-timeout",
            "0.5",
            "--attempt-timeout",
            "1",
            "--max-turns",
            "4",
          ],
          { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: own.url } },
        );
        expect(result.stderr).not.toMatch(/unexpected error|FATAL/);
        // 2: a wrong endpoint (html_200) is bad input naming the fix (R-R9); 3/4 a typed failure.
        expect([0, 2, 3, 4]).toContain(result.code);
        const last = streamJsonLines(result.stdout).at(-1);
        expect(last?.type).toBe("result");
        for (const record of own.requests()) expect(record.violations).toEqual([]);
      } finally {
        await own.close();
      }
    },
  );
});

describe("R-R1–R-R3 chaos: batch items against the hostile server", () => {
  it("a 40-item batch through the CLI: every item settles typed (succeeded or failed with an error), no crash, the API's tool rules kept, requests per item bounded", async () => {
    const ITEMS = 40;
    const ITEM_TURNS = 4;
    const ITEM_RETRIES = 3;
    const random = seeded(SEED + 1);
    const own = await startHostileServer({
      // R-R9: an HTML 200 says the endpoint is wrong and stops a whole batch (whole-batch-failures.test.ts).
      behaviour: () => drawBehaviour(random, ["html_200"]),
      toolUse: { name: "Glob", input: { pattern: "*.md" } },
    });
    const cwd = join(dir, "batch");
    await mkdir(cwd, { recursive: true });
    await writeFile(join(cwd, "README.md"), "# chaos batch\n");
    const items = Array.from({ length: ITEMS }, (_, n) => JSON.stringify({ n })).join("\n");
    await writeFile(join(cwd, "items.jsonl"), `${items}\n`);
    try {
      const batch = await runCliInProcess(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "List the markdown files for item {{item.n}}.",
          "--concurrency",
          "8",
          "--max-turns",
          String(ITEM_TURNS),
          "--idle-timeout",
          "1",
          "--headers-timeout",
          "1",
          "--attempt-timeout",
          "2",
          "--id",
          "hostile",
        ],
        {
          cwd,
          env: {
            ANTHROPIC_API_KEY: "test-key",
            ANTHROPIC_BASE_URL: own.url,
            FORKLOOP_MAX_RETRIES: String(ITEM_RETRIES),
          },
        },
      );
      expect(batch.stderr).not.toMatch(/unexpected error|FATAL|\n\s+at /);
      expect([0, 6, 7], batch.stderr.slice(-2000)).toContain(batch.code);
      const rows = (await readFile(join(batchStateDir(cwd, "hostile"), "results.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map(
          (line) =>
            JSON.parse(line) as {
              status: string;
              turns: number;
              apiRetries?: number;
              error?: { code: string } | null;
            },
        );
      const records = own.requests();
      const perItem = rows.map((row) => row.turns + (row.apiRetries ?? 0));
      const kinds: Record<string, number> = {};
      for (const record of records) kinds[record.kind] = (kinds[record.kind] ?? 0) + 1;
      console.log(
        `chaos/hostile batch: ${ITEMS} items, ${records.length} requests, ` +
          `${rows.filter((row) => row.status === "succeeded").length} succeeded; per item requests ${JSON.stringify(spread(perItem))}; behaviours ${JSON.stringify(kinds)}`,
      );
      expect(rows).toHaveLength(ITEMS);
      for (const row of rows) {
        expect(["succeeded", "failed"]).toContain(row.status);
        if (row.status === "failed") expect(typeof row.error?.code).toBe("string");
      }
      expect(records.flatMap((record) => record.violations)).toEqual([]);
      // Each turn's request retried to the end, a max_tokens-style recovery aside.
      expect(Math.max(...perItem)).toBeLessThanOrEqual(ITEM_TURNS * (ITEM_RETRIES + 1));
    } finally {
      await own.close();
    }
  }, 120_000);
});
