import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { readJournal } from "@forkloop/batch";
import { batchStateDir, runCliInProcess, sessionsStateDir, streamJsonLines } from "@forkloop/cli/testing";
import { startSimulator } from "@forkloop/sim";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";

let template: string;
let dir: string;
/** One finished batch "dmg" of 4 items, made once; each test damages its own copy. */
beforeAll(async () => {
  template = await mkdtemp(join(tmpdir(), "forkloop-damage-template-"));
  await mkdir(join(template, "src"));
  for (const name of ["a", "b", "c", "d"])
    await writeFile(join(template, "src", `${name}.ts`), `export const ${name} = 1;\n`);
  const made = await runCliInProcess(
    ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--id", "dmg"],
    {
      cwd: template,
    },
  );
  expect(made.code, made.stderr).toBe(0);
});
afterAll(async () => {
  await rm(template, { recursive: true, force: true });
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-damage-"));
  await cp(template, dir, { recursive: true });
  // The state is keyed by the project's path (state-dirs.ts): move the copy's under its own key.
  await mkdir(dirname(batchStateDir(dir, "dmg")), { recursive: true });
  await rename(join(dir, relative(template, batchStateDir(template, "dmg"))), batchStateDir(dir, "dmg"));
  // batch.json holds absolute paths (cwd, output): point the copy at itself.
  const spec = join(batchStateDir(dir, "dmg"), "batch.json");
  await writeFile(spec, (await readFile(spec, "utf8")).replaceAll(template, dir));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const batchDir = () => batchStateDir(dir, "dmg");
const journal = () => join(batchDir(), "journal.log");
const resume = (...extra: string[]) => runCliInProcess(["batch", "--resume", "dmg", ...extra], { cwd: dir });
const completedIds = async () =>
  (await readJournal(batchDir())).records.flatMap((record) =>
    record.type === "completed" ? [record.id] : [],
  );
const noStack = (stderr: string) => expect(stderr).not.toMatch(/unexpected error|\n\s+at /);

describe("R-R4: a damaged or lost batch journal through the built CLI", () => {
  it("one damaged middle record: resume stops (exit 2, file, offset, intact count, fix); --repair finishes, nothing twice", async () => {
    const bytes = await readFile(journal());
    const third = bytes.indexOf(0x0a, bytes.indexOf(0x0a) + 1) + 1;
    bytes[third + 15] = (bytes[third + 15] ?? 0) ^ 0x08;
    await writeFile(journal(), bytes);
    const refused = await resume();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${journal()} is damaged at byte ${third} of ${bytes.length}`);
    expect(refused.stderr).toMatch(/the 2 records before it are intact, \d+ readable records follow it/);
    expect(refused.stderr).toContain("forkloop batch --resume dmg --repair");
    noStack(refused.stderr);
    expect(await readFile(journal())).toEqual(bytes); // never rewritten without --repair

    const repaired = await resume("--repair");
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stderr).toMatch(
      /repaired .*journal\.log: kept \d+ readable records, dropped 1 damaged line/,
    );
    const completed = await completedIds();
    expect(new Set(completed).size).toBe(4);
    // The damaged record was item c's enqueue: c is run again (it is unknown), the rest are not.
    expect(completed.length).toBe(5);
    expect((await readdir(batchDir())).some((name) => name.startsWith("journal.log.damaged-"))).toBe(true);
  });

  it.each([
    ["emptied", () => truncate(journal(), 0)],
    [
      "truncated at a record boundary",
      async () => {
        const bytes = await readFile(journal());
        await writeFile(journal(), bytes.subarray(0, bytes.indexOf(0x0a) + 1));
      },
    ],
    ["deleted", () => rm(journal())],
  ])(
    "a journal %s is no '0 items, exit 0': resume refuses, results.jsonl is kept; --repair re-lists the source",
    async (_name, damage) => {
      const results = await readFile(join(batchDir(), "results.jsonl"), "utf8");
      await damage();
      const refused = await resume();
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /journal\.log holds \d items?, but its enqueue seal says 4 were enqueued: it lost records/,
      );
      expect(refused.stderr).toContain("--repair");
      noStack(refused.stderr);
      expect(await readFile(join(batchDir(), "results.jsonl"), "utf8")).toBe(results);

      const repaired = await resume("--repair");
      expect(repaired.code, repaired.stderr).toBe(0);
      expect(repaired.stderr).toMatch(/listed the files of "src\/\*\.ts" again: 4 items/);
      const lines = (await readFile(join(batchDir(), "results.jsonl"), "utf8")).trim().split("\n");
      expect(lines.map((line) => JSON.parse(line).status)).toEqual([
        "succeeded",
        "succeeded",
        "succeeded",
        "succeeded",
      ]);
    },
  );

  it("a torn last record is dropped and said once on stderr; the resume goes on", async () => {
    await writeFile(
      journal(),
      Buffer.concat([await readFile(journal()), Buffer.from('0000abcd {"type":"clai')]),
    );
    const resumed = await resume();
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(
      resumed.stderr.match(/ended in a torn record \(22 bytes, an interrupted write\); it was dropped/g),
    ).toHaveLength(1);
  });

  it.each([
    [
      "a truncated batch.json",
      async () => truncate(join(batchDir(), "batch.json"), 40),
      /batch\.json is damaged \(not valid JSON/,
    ],
    [
      "a journal that is a directory",
      async () => {
        await rm(journal());
        await mkdir(journal());
      },
      /journal\.log: a directory stands where a file should be \(EISDIR\)/,
    ],
  ])("%s: exit 2 with a message naming the file, no stack trace", async (_name, damage, message) => {
    await damage();
    const refused = await resume();
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(message);
    noStack(refused.stderr);
  });

  it("an output path that is a file fails in the first second: exit 2, no model request", async () => {
    const server = await startSimulator();
    try {
      await writeFile(join(dir, "report"), "in the way");
      const result = await runCliInProcess(
        ["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}", "--output", "report"],
        { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url } },
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/output directory .*report is a file, not a directory\. .*--output DIR/);
      noStack(result.stderr);
      expect(server.requests()).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});

describe("R-R4: a damaged session transcript through the built CLI", () => {
  it("one corrupted byte: resume refuses (exit 2) and keeps the file; replay shows the intact part; --repair continues", async () => {
    const first = await runCliInProcess(["run", "Summarize src/a.ts", "--output-format", "stream-json"], {
      cwd: dir,
    });
    expect(first.code, first.stderr).toBe(0);
    const id = String(streamJsonLines(first.stdout).at(-1)?.session_id);
    const path = join(sessionsStateDir(dir), `${id}.fltr`);
    const bytes = await readFile(path);
    const at = Math.floor(bytes.length / 2);
    bytes[at] = (bytes[at] ?? 0) ^ 0x20;
    await writeFile(path, bytes);

    const refused = await runCliInProcess(["run", "--resume", id, "And now b.ts"], { cwd: dir });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(
      new RegExp(
        `${id}\\.fltr is damaged at byte \\d+ of ${bytes.length}: the \\d+ records before it are intact`,
      ),
    );
    expect(refused.stderr).toContain(`forkloop run --resume ${id} --repair`);
    noStack(refused.stderr);
    expect(await readFile(path)).toEqual(bytes);

    const replay = await runCliInProcess(["replay", id], { cwd: dir });
    expect(replay.code).toBe(2);
    expect(replay.stdout).toContain("user: Summarize src/a.ts");
    expect(replay.stderr).toContain("is damaged at byte");

    const repaired = await runCliInProcess(
      ["run", "--resume", id, "--repair", "And now b.ts", "--output-format", "stream-json"],
      {
        cwd: dir,
      },
    );
    expect(repaired.code, repaired.stderr).toBe(0);
    expect(repaired.stderr).toMatch(
      /repaired .*: kept its \d+ intact records; the damaged file is .*\.damaged-/,
    );
    expect(streamJsonLines(repaired.stdout).at(-1)).toMatchObject({ type: "result", subtype: "success" });
  });

  it("a torn last record: the resume says so once and continues", async () => {
    const first = await runCliInProcess(["run", "Summarize src/a.ts", "--output-format", "stream-json"], {
      cwd: dir,
    });
    const id = String(streamJsonLines(first.stdout).at(-1)?.session_id);
    const path = join(sessionsStateDir(dir), `${id}.fltr`);
    await writeFile(path, Buffer.concat([await readFile(path), Buffer.from([200, 0, 0, 0, 1, 2])]));
    const resumed = await runCliInProcess(["run", "--resume", id, "Again"], { cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(
      resumed.stderr.match(/ended in a torn record \(an interrupted write\); it was dropped/g),
    ).toHaveLength(1);
  });
});
