import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type ApiMessage, createAssistantMessage, type Message, type UserMessage } from "@forkloop/loop-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { answerOpenToolUses } from "./resumed-history.js";
import { loadIntactTranscript, loadTranscript, repairTranscript, TranscriptWriter } from "./transcript.js";
import { encodeRecord } from "./transcript-format.js";

const user = (index: number): UserMessage => ({
  type: "user",
  uuid: `u${index}`,
  parentUuid: index === 0 ? null : `u${index - 1}`,
  timestamp: new Date(0).toISOString(),
  message: { role: "user", content: `message ${index}` },
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkloop-damage-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** A transcript of `count` messages; returns the path and where each record starts. */
function write(count: number): { path: string; offsets: number[] } {
  const path = join(dir, "s.fltr");
  const writer = new TranscriptWriter(path);
  const offsets: number[] = [];
  let at = 0;
  for (let index = 0; index < count; index++) {
    offsets.push(at);
    writer.append({ type: "message", message: user(index) });
    at += encodeRecord({ type: "message", message: user(index) }).length;
  }
  writer.close();
  return { path, offsets };
}

describe("R-R4: a damaged transcript is never truncated or read silently", () => {
  it("one corrupted byte in a middle record: load refuses with the offset and the intact count", async () => {
    const { path, offsets } = write(18);
    const bytes = readFileSync(path);
    const at = offsets[9]! + 20;
    bytes[at] = (bytes[at] ?? 0) ^ 0x40;
    writeFileSync(path, bytes);
    await expect(loadTranscript(path)).rejects.toMatchObject({
      code: "transcript_corrupt",
      data: { path, offset: offsets[9], intactRecords: 9, laterRecords: 8, fileBytes: bytes.length },
    });
    // Opening it for a resumed session refuses too, and leaves every byte where it was.
    expect(() => new TranscriptWriter(path)).toThrow(/damaged at byte/);
    expect(readFileSync(path)).toEqual(bytes);
    const intact = await loadIntactTranscript(path);
    expect(intact.messages).toHaveLength(9);
    expect(intact.damage).toMatchObject({ offset: offsets[9], intactRecords: 9 });
  });

  it("a damaged length field (the record seems to run past the end) is damage when good records follow", async () => {
    const { path, offsets } = write(6);
    const bytes = readFileSync(path);
    bytes.writeUInt32LE(0x7fffff, offsets[2]!);
    writeFileSync(path, bytes);
    await expect(loadTranscript(path)).rejects.toMatchObject({
      code: "transcript_corrupt",
      data: { offset: offsets[2], intactRecords: 2, laterRecords: 3 },
    });
  });

  it("a torn last record is still just dropped (the interrupted-write case)", async () => {
    const { path } = write(4);
    const bytes = readFileSync(path);
    writeFileSync(path, bytes.subarray(0, bytes.length - 5));
    const loaded = await loadTranscript(path);
    expect(loaded).toMatchObject({ torn: true });
    expect(loaded.messages).toHaveLength(3);
  });

  it("repairTranscript keeps the intact records and moves the damaged file aside", async () => {
    const { path, offsets } = write(10);
    const bytes = readFileSync(path);
    bytes[offsets[4]! + 12] = (bytes[offsets[4]! + 12] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    const repaired = await repairTranscript(path);
    expect(repaired?.keptRecords).toBe(4);
    expect(readFileSync(repaired!.backupPath)).toEqual(bytes);
    const loaded = await loadTranscript(path);
    expect(loaded.messages.map((message) => message.uuid)).toEqual(["u0", "u1", "u2", "u3"]);
    expect(readdirSync(dir).filter((name) => name.includes(".damaged-"))).toHaveLength(1);
    expect(await repairTranscript(path)).toBeUndefined(); // nothing left to repair
  });
});

describe("R-L12, R-R4: a history that stopped mid-turn is closed on resume", () => {
  const assistant = (uuid: string, ids: readonly string[]) =>
    createAssistantMessage(
      {
        id: `msg_${uuid}`,
        type: "message",
        role: "assistant",
        model: "m",
        content: ids.map((id) => ({ type: "tool_use", id, name: "Bash", input: { command: "true" } })),
        stop_reason: "tool_use",
        stop_sequence: null,
        usage: { input_tokens: 1, output_tokens: 1 },
      } as unknown as ApiMessage,
      { uuid, parentUuid: "u0" },
    );
  const result = (id: string): UserMessage => ({
    ...user(9),
    uuid: `r-${id}`,
    message: { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: "ok" }] },
  });

  it.each([
    ["no open call", [user(0), assistant("a1", ["t1"]), result("t1")], []],
    ["one call never answered (killed while it ran)", [user(0), assistant("a1", ["t1"])], ["t1"]],
    ["one of two parallel calls answered", [user(0), assistant("a1", ["t1", "t2"]), result("t1")], ["t2"]],
  ] as [string, Message[], string[]][])("%s", (_name, history, expected) => {
    const closed = answerOpenToolUses(history);
    expect(
      closed.map(
        (message) => (message.message.content as unknown as { tool_use_id: string }[])[0]?.tool_use_id,
      ),
    ).toEqual(expected);
    for (const message of closed)
      expect(JSON.stringify(message.message.content)).toContain('"is_error":true');
  });
});
