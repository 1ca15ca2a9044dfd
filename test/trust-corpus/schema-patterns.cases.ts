import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CaseGroup, CorpusCase, Through } from "./corpus.js";
import { batchArgs, runCliAgainst } from "./drive.js";
import { freshDir } from "./places.js";

/**
 * R-S12: a JSON Schema `pattern` (the user's `--json-schema`) meets the model's string: an item's
 * structured output of forty a's and a b against `^(a+)+$` would take V8's backtracking engine
 * hours. The built binary runs the batch (a hang would stop this process too); the watchdog kills
 * it, which counts as through. The item must fail validation, promptly, and the batch end.
 */
const CASES: readonly CorpusCase[] = [
  {
    id: "schema-pattern-nested-quantifier",
    area: "trust-patterns",
    what: "--json-schema pattern ^(a+)+$ against an answer of 40 a's and a b",
  },
];

async function run(dir: string): Promise<Through[]> {
  const cwd = freshDir(dir, "project");
  const schema = join(dir, "schema.json");
  writeFileSync(
    schema,
    JSON.stringify({
      type: "object",
      properties: { finding: { type: "string", pattern: "^(a+)+$" } },
      required: ["finding"],
    }),
  );
  const answer = JSON.stringify({ finding: `${"a".repeat(40)}b` });
  const seen = await runCliAgainst(batchArgs(join(dir, "items"), 1, ["--json-schema", schema]), {
    spawn: true,
    cwd,
    home: freshDir(dir, "home"),
    scenario: { rules: [{ match: {}, reply: { content: [{ type: "text", text: answer }] } }] },
    watchdogMs: 120_000,
  });
  if (seen.hung) return [{ id: CASES[0]!.id, effect: "the batch never ended (killed by the watchdog)" }];
  // The item fails validation (exit 7: none succeeded); anything else is a harness problem.
  if (seen.code !== 7) return [{ id: "harness", effect: `exit ${seen.code}: ${seen.stderr.slice(-400)}` }];
  return [];
}

export const groups: readonly CaseGroup[] = [
  {
    title: "R-S12: a --json-schema pattern against the model's answer ends in bounded time",
    cases: CASES,
    surfaces: [{ label: "the built forkloop binary, batch --json-schema (one item)", run }],
  },
];
