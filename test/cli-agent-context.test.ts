import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess,
  type SimHandle,
  withSim,
  writeScenario,
} from "@forkloop/cli/testing";
import { forkPrefixDifferences } from "@forkloop/orchestrator/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// Every agent manages its own context: batch items and Agent sub-agents compact, through
// the CLI against a `forkloop sim` whose request log shows what each one sent.

/** Four files of ~3.5k tokens; each names itself on its first line (a cut result keeps its head). */
const PARTS = 4;
/** 24k window, 2k output cap → auto-compact line 9k (R-C7): every read after the first compacts. */
const WINDOW_24K = [{ id: "claude-sonnet-4-6", contextWindow: 24_000, maxOutputTokens: 2_000 }];
const SUMMARY =
  "<summary>## Goal and constraints\nAudit item: read every part file in parts/ and report.\n## Next step\nRead the next part.</summary>";

/** A sub-agent's task is its definition's prompt + the task: a summary that keeps it says both. */
const SUB_AGENT_SUMMARY = SUMMARY.replace(
  "## Next step",
  "A sub-agent working on one task for a parent agent: do the task with the tools you have, then answer with a concise report of what you found or changed and anything the parent must know (Audit the parts).\n## Next step",
);

/** The scripted agent: read part 1, then each next part, then answer; compact requests get a summary. */
function readingRules(querySource: string): Record<string, unknown>[] {
  const next = Array.from({ length: PARTS }, (_, index) => PARTS - index).map((part) =>
    part === PARTS
      ? {
          match: { querySource, lastToolResult: `PART-${part} ` },
          reply: { content: [{ type: "text", text: "Audit done: every part read." }] },
        }
      : {
          match: { querySource, lastToolResult: `PART-${part} ` },
          reply: {
            content: [{ type: "tool_use", name: "Read", input: { file_path: `parts/part${part + 1}.md` } }],
          },
        },
  );
  return [
    ...next,
    {
      match: { querySource },
      reply: { content: [{ type: "tool_use", name: "Read", input: { file_path: "parts/part1.md" } }] },
    },
  ];
}

type SimRecord = Awaited<ReturnType<SimHandle["requests"]>>[number];

function promptTokens(record: SimRecord): number {
  const usage = record.usage as {
    input_tokens?: number;
    cache_read_input_tokens: number;
    cache_creation_input_tokens: number;
  };
  return (usage.input_tokens ?? 0) + usage.cache_read_input_tokens + usage.cache_creation_input_tokens;
}

/**
 * R-F3 for each compact request of an agent: its body is the agent's previous request (the one
 * that wrote the cache) plus the newest messages and the instruction, and it reads that whole
 * request from the cache — the agent's own prefix, not only tools + system.
 */
function expectCacheSafeCompacts(
  records: readonly SimRecord[],
  agentMarker: string,
  agentSource: string,
): number {
  const own = records.filter(
    (record) => record.path === "/v1/messages" && record.rawBody.includes(agentMarker),
  );
  let compacts = 0;
  own.forEach((record, index) => {
    if (record.querySource !== "compact") return;
    compacts++;
    const previous = own
      .slice(0, index)
      .reverse()
      .find((earlier) => earlier.querySource === agentSource);
    if (!previous) throw new Error(`${agentMarker}: a compact request before any request of the agent`);
    expect(forkPrefixDifferences(previous.rawBody, record.rawBody)).toEqual([]);
    expect(record.usage?.cache_read_input_tokens).toBeGreaterThanOrEqual(promptTokens(previous));
  });
  return compacts;
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-batch-context-"));
  await mkdir(join(dir, "src"), { recursive: true });
  for (let index = 0; index < 2; index++)
    await writeFile(join(dir, "src", `m${index}.ts`), `export const m${index} = ${index};\n`);
  await mkdir(join(dir, "parts"), { recursive: true });
  for (let part = 1; part <= PARTS; part++) {
    const lines = Array.from({ length: 250 }, (_, i) => `line ${i} of part ${part}: alpha beta gamma delta`);
    await writeFile(join(dir, "parts", `part${part}.md`), `PART-${part} begins here\n${lines.join("\n")}\n`);
  }
  await writeFile(join(dir, "window-24k.json"), JSON.stringify(WINDOW_24K));
  await writeFile(
    join(dir, "items.jsonl"),
    Array.from({ length: 20 }, (_, index) => `${JSON.stringify({ n: index })}\n`).join(""),
  );
  await writeFile(
    join(dir, "cap-4k.json"),
    JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 200_000, maxOutputTokens: 4_000 }]),
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function results(id: string) {
  const text = await readFile(join(batchStateDir(dir, id), "results.jsonl"), "utf8");
  return text
    .trim()
    .split("\n")
    .map(
      (line) =>
        JSON.parse(line) as {
          label: string;
          status: string;
          error: { message: string } | null;
          compactions: { trigger: string; preTokens: number; postTokens: number }[];
        },
    );
}

describe("forkloop batch: each item's context", () => {
  it("R-F3: the shared prefix takes max_tokens from the model's cap (a models file with a 4,000 cap: every item succeeds)", async () => {
    // FORKLOOP_MODELS sets the client's model info and the embedded simulator's registry alike.
    const run = await runCliInProcess(
      ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--id", "cap"],
      { cwd: dir, env: { FORKLOOP_MODELS: "cap-4k.json" } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect((await results("cap")).map((line) => [line.label, line.status, line.error])).toEqual([
      ["src/m0.ts", "succeeded", null],
      ["src/m1.ts", "succeeded", null],
    ]);
  });

  it("R-C4: 20 batch items in a 24k window each read four 3.5k-token files → every item completes with ≥ 2 compactions (in results.jsonl and the report), each compact request a cache read of that item's own prefix", async () => {
    const scenario = await writeScenario(
      join(dir, "batch-reader.json"),
      [
        { match: { querySource: "compact" }, reply: { content: [{ type: "text", text: SUMMARY }] } },
        ...readingRules("batch"),
      ],
      "(unscripted)",
    );
    await withSim(dir, ["--models", "window-24k.json", "--scenario", scenario], async (sim) => {
      const run = await runCliInProcess(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Audit item {{item.n}}: read every part file in parts/ and report",
          "--id",
          "long",
          "--max-turns",
          "12",
        ],
        { cwd: dir, env: { ...sim.env, FORKLOOP_MODELS: "window-24k.json" } },
      );
      expect(run.code, run.stderr).toBe(0);
      const lines = await results("long");
      expect(lines).toHaveLength(20);
      for (const line of lines) {
        expect(line.status, line.label).toBe("succeeded");
        expect(line.compactions.length, line.label).toBeGreaterThanOrEqual(2);
        for (const compaction of line.compactions) {
          expect(compaction.trigger).toBe("auto");
          expect(compaction.postTokens).toBeLessThan(compaction.preTokens);
        }
      }
      const report = JSON.parse(await readFile(join(batchStateDir(dir, "long"), "report.json"), "utf8"));
      expect(report.totals.compactions).toBe(lines.reduce((sum, line) => sum + line.compactions.length, 0));
      expect(await readFile(join(batchStateDir(dir, "long"), "report.md"), "utf8")).toContain(
        "| compactions |",
      );

      const records = await sim.requests();
      // Nothing was ever sent over the window: every request was answered.
      expect(records.filter((record) => record.status !== 200)).toEqual([]);
      for (let item = 0; item < 20; item++) {
        const compacts = expectCacheSafeCompacts(records, `Audit item ${item}:`, "batch");
        expect(compacts, `item ${item}`).toBe(lines[item]!.compactions.length);
      }
    });
  });

  it("R-C4: an Agent sub-agent of `forkloop run` in a 24k window compacts its own history (≥ 2 times), each compact request a cache read of the sub-agent's own prefix", async () => {
    const scenario = await writeScenario(
      join(dir, "agent-reader.json"),
      [
        {
          match: { querySource: "compact" },
          reply: { content: [{ type: "text", text: SUB_AGENT_SUMMARY }] },
        },
        {
          match: { querySource: "sdk", lastToolResult: "[Subagent hand-back]" },
          reply: { content: [{ type: "text", text: "The sub-agent audited every part." }] },
        },
        {
          match: { querySource: "sdk" },
          reply: {
            content: [
              {
                type: "tool_use",
                name: "Agent",
                input: {
                  description: "Audit the parts",
                  prompt: "Audit item 99: read every part file in parts/ and report",
                },
              },
            ],
          },
        },
        ...readingRules("agent:general-purpose"),
      ],
      "(unscripted)",
    );
    await withSim(dir, ["--models", "window-24k.json", "--scenario", scenario], async (sim) => {
      const run = await runCliInProcess(
        // The 24k window is sized for Sonnet 4.6 (its tokenizer), not run's default Opus (R-X2).
        [
          "run",
          "--model",
          "claude-sonnet-4-6",
          "Have a sub-agent audit the parts.",
          "--output-format",
          "stream-json",
        ],
        {
          cwd: dir,
          env: { ...sim.env, FORKLOOP_MODELS: "window-24k.json" },
        },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toContain("The sub-agent audited every part.");
      const records = await sim.requests();
      expect(records.filter((record) => record.status !== 200)).toEqual([]);
      const subAgent = records.filter((record) => record.querySource === "agent:general-purpose");
      expect(subAgent.at(-1)?.rawBody).toContain("PART-4 begins here");
      expect(
        expectCacheSafeCompacts(records, "Audit item 99:", "agent:general-purpose"),
      ).toBeGreaterThanOrEqual(2);
    });
  });
});
