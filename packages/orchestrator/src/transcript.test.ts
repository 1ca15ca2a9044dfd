import { appendFileSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Message, UserMessage } from "@forkloop/loop-core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listSessions } from "./session-list.js";
import { loadTranscript, sessionTranscriptPath, TranscriptWriter } from "./transcript.js";
import { encodeRecord } from "./transcript-format.js";

function userMessage(index: number, parentUuid: string | null = null): UserMessage {
  return {
    type: "user",
    uuid: `u${index}`,
    parentUuid,
    timestamp: new Date(0).toISOString(),
    message: { role: "user", content: `message ${index}` },
  };
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkloop-transcript-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("transcripts", () => {
  it("round-trips records with parent links", async () => {
    const path = sessionTranscriptPath(dir, "s1");
    const writer = new TranscriptWriter(path);
    writer.append({
      type: "session_start",
      sessionId: "s1",
      agentId: "main",
      cwd: dir,
      model: "claude-sonnet-4-6",
      querySource: "sdk",
      createdAt: new Date(0).toISOString(),
    });
    writer.appendMessages([userMessage(0), userMessage(1, "u0")]);
    writer.close();
    const loaded = await loadTranscript(path);
    expect(loaded.torn).toBe(false);
    expect(loaded.messages.map((message) => [message.uuid, message.parentUuid])).toEqual([
      ["u0", null],
      ["u1", "u0"],
    ]);
    expect(loaded.start?.sessionId).toBe("s1");
  });

  it("detects and drops a torn last record, and the next writer cuts it before appending", async () => {
    const path = join(dir, "torn.fltr");
    const writer = new TranscriptWriter(path);
    writer.appendMessages([userMessage(0), userMessage(1, "u0")]);
    writer.close();
    const full = readFileSync(path).length;
    // A third record, cut in the middle as a kill -9 during writeSync would leave it.
    const third = encodeRecord({ type: "message", message: userMessage(2, "u1") });
    appendFileSync(path, third.subarray(0, third.length - 3));
    const loaded = await loadTranscript(path);
    expect(loaded.torn).toBe(true);
    expect(loaded.messages.map((message) => message.uuid)).toEqual(["u0", "u1"]);

    const resumed = new TranscriptWriter(path);
    expect(readFileSync(path).length).toBe(full);
    resumed.append({ type: "message", message: userMessage(3, "u1") });
    resumed.close();
    const reloaded = await loadTranscript(path);
    expect(reloaded.torn).toBe(false);
    expect(reloaded.messages.map((message) => message.uuid)).toEqual(["u0", "u1", "u3"]);
  });

  it("stops at a record whose checksum does not match (never returns corrupt data)", async () => {
    const path = join(dir, "flip.fltr");
    const writer = new TranscriptWriter(path);
    writer.appendMessages([userMessage(0), userMessage(1, "u0")]);
    writer.close();
    const bytes = readFileSync(path);
    bytes[bytes.length - 2] = (bytes[bytes.length - 2] ?? 0) ^ 0xff;
    writeFileSync(path, bytes);
    const loaded = await loadTranscript(path);
    expect(loaded.torn).toBe(true);
    expect(loaded.messages.map((message) => message.uuid)).toEqual(["u0"]);
  });

  it("a header cut short is torn too", async () => {
    const path = join(dir, "short.fltr");
    const writer = new TranscriptWriter(path);
    writer.appendMessages([userMessage(0)]);
    writer.close();
    const length = readFileSync(path).length;
    appendFileSync(path, Buffer.from([1, 2, 3]));
    expect((await loadTranscript(path)).torn).toBe(true);
    truncateSync(path, length);
    expect((await loadTranscript(path)).torn).toBe(false);
  });

  it("a history record (after compaction) replaces the messages before it", async () => {
    const path = join(dir, "compact.fltr");
    const writer = new TranscriptWriter(path);
    writer.appendMessages([userMessage(0), userMessage(1, "u0")]);
    const summary: Message = userMessage(9);
    writer.append({ type: "history", messages: [summary] });
    writer.append({ type: "message", message: userMessage(10, "u9") });
    writer.close();
    expect((await loadTranscript(path)).messages.map((message) => message.uuid)).toEqual(["u9", "u10"]);
  });

  it("lists sessions with their first prompt", async () => {
    for (const id of ["a", "b"]) {
      const writer = new TranscriptWriter(sessionTranscriptPath(dir, id));
      writer.append({
        type: "session_start",
        sessionId: id,
        agentId: "main",
        cwd: dir,
        model: "m",
        querySource: "sdk",
        createdAt: new Date(0).toISOString(),
      });
      writer.appendMessages([userMessage(0)]);
      writer.close();
    }
    const sessions = await listSessions(dir);
    expect(sessions.map((session) => session.sessionId).sort()).toEqual(["a", "b"]);
    expect(sessions[0]?.firstPrompt).toBe("message 0");
    expect(await listSessions(join(dir, "missing"))).toEqual([]);
  });
});
