import { appendFile, mkdtemp, open, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeRecord, LogWriteError, type OpenFile, openLog, parseLog, readLog } from "./append-log.js";

/** Opens the file for real, but its writes take `okBytes` bytes in all and then fail (ENOSPC). */
const fullDiskAfter =
  (okBytes: number): OpenFile =>
  async (path, flags) => {
    const handle = await open(path, flags);
    let budget = okBytes;
    return new Proxy(handle, {
      get(target, key) {
        if (key !== "write") {
          const value = Reflect.get(target, key);
          return typeof value === "function" ? value.bind(target) : value;
        }
        return async (buffer: Buffer, offset: number, length: number) => {
          const take = Math.min(length, budget);
          budget -= take;
          if (take <= 0)
            throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
          return target.write(buffer, offset, take);
        };
      },
    });
  };

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

  it("R-R4: corruption in the middle is damage, reported with its offset, never truncated", async () => {
    const path = join(dir, "log");
    const first = encodeRecord({ a: 1 });
    await writeFile(path, `${first}garbage\n`);
    await appendFile(path, encodeRecord({ b: 2 }) + encodeRecord({ c: 3 }));
    const contents = await readLog(path);
    expect(contents).toMatchObject({
      records: [{ a: 1 }],
      tornTail: false,
      damage: { offset: first.length, intactRecords: 1, laterRecords: [{ b: 2 }, { c: 3 }], badLines: 1 },
    });
    await expect(openLog(path, contents)).rejects.toThrow(/damaged/);
    expect(await readFile(path, "utf8")).toContain("garbage");
  });

  it("R-R4: one flipped byte in a middle record is damage too (each line has its own checksum)", () => {
    const lines = [encodeRecord({ a: 1 }), encodeRecord({ b: 2 }), encodeRecord({ c: 3 })];
    const bytes = Buffer.from(lines.join(""));
    const at = lines[0]!.length + 12;
    bytes[at] = (bytes[at] ?? 0) ^ 0x01;
    expect(parseLog(bytes).damage).toMatchObject({ intactRecords: 1, laterRecords: [{ c: 3 }] });
  });

  it("R-R4: a short write then ENOSPC acknowledges nothing, cuts the partial record off, refuses later appends", async () => {
    const path = join(dir, "log");
    const first = encodeRecord({ a: 1 });
    const log = await openLog(path, await readLog(path), fullDiskAfter(first.length + 10));
    await log.append({ a: 1 });
    const failed = log.append({ b: 2 }); // 10 bytes of it fit, then the disk is full
    await expect(failed).rejects.toBeInstanceOf(LogWriteError);
    await expect(failed).rejects.toMatchObject({ path, code: "ENOSPC" });
    await expect(log.append({ c: 3 })).rejects.toBeInstanceOf(LogWriteError);
    await log.close();
    expect(await readFile(path, "utf8")).toBe(first);
    expect(await readLog(path)).toMatchObject({ records: [{ a: 1 }], tornTail: false });
  });
});
