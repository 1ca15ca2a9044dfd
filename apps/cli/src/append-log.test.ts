import { appendFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CorruptLogError, encodeRecord, openLog, parseLog, readLog } from "./append-log.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-log-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("append log (batch journal framing)", () => {
  it("round-trips records appended concurrently (group commit keeps every one)", async () => {
    const path = join(dir, "log");
    const log = await openLog(path, await readLog(path));
    await Promise.all(Array.from({ length: 50 }, (_, index) => log.append({ index })));
    await log.close();
    const { records, tornTail } = await readLog(path);
    expect(tornTail).toBe(false);
    expect(records.map((record) => (record as { index: number }).index).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 50 }, (_, index) => index),
    );
  });

  it("drops a torn last record and truncates it before the next append", async () => {
    const path = join(dir, "log");
    await writeFile(path, encodeRecord({ a: 1 }) + encodeRecord({ b: 2 }).slice(0, 12));
    const contents = await readLog(path);
    expect(contents).toMatchObject({ records: [{ a: 1 }], tornTail: true });
    const log = await openLog(path, contents);
    await log.append({ c: 3 });
    await log.close();
    expect((await readLog(path)).records).toEqual([{ a: 1 }, { c: 3 }]);
  });

  it("drops a complete last line whose checksum does not match", () => {
    const bad = encodeRecord({ a: 2 }).replace('"a":2', '"a":3');
    expect(parseLog(Buffer.from(encodeRecord({ a: 1 }) + bad))).toMatchObject({
      records: [{ a: 1 }],
      tornTail: true,
    });
  });

  it("refuses corruption in the middle (that is damage, not a crash)", async () => {
    const path = join(dir, "log");
    await writeFile(path, `${encodeRecord({ a: 1 })}garbage\n`);
    await appendFile(path, encodeRecord({ b: 2 }));
    await expect(readLog(path)).rejects.toBeInstanceOf(CorruptLogError);
    expect(await readFile(path, "utf8")).toContain("garbage");
  });
});
