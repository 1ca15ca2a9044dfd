import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CacheSafeParams, Message, UserMessage } from "@forkloop/loop-core";
import { Packr } from "msgpackr";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { resumedState } from "./resumed-history.js";
import {
  loadTranscript,
  readTranscript,
  sessionTranscriptPath,
  TRANSCRIPT_FORMAT,
  TranscriptWriter,
} from "./transcript.js";

/** R-R12: transcripts grow with the conversation, not with turns × context. */

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "forkloop-transcript-prefix-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function message(index: number): UserMessage {
  return {
    type: "user",
    uuid: `m${index}`,
    parentUuid: index === 0 ? null : `m${index - 1}`,
    timestamp: new Date(0).toISOString(),
    message: { role: "user", content: `turn ${index}: ${"result line\n".repeat(20)}` },
  };
}

/** A request prefix as big as a real one: a long system prompt and 20 tool definitions. */
function prefixOf(messages: readonly Message[], model = "claude-sonnet-4-6"): CacheSafeParams {
  return {
    model,
    systemPrompt: [{ type: "text", text: "You are an agent. ".repeat(2_000) }],
    tools: Array.from({ length: 20 }, (_, index) => ({
      name: `Tool${index}`,
      description: "Does one thing well. ".repeat(40),
      input_schema: { type: "object" as const, properties: { path: { type: "string" } } },
    })),
    maxOutputTokens: 32_000,
    forkContextMessages: messages,
  };
}

function start(writer: TranscriptWriter) {
  writer.append({
    type: "session_start",
    sessionId: "s",
    agentId: "main",
    cwd: dir,
    model: "claude-sonnet-4-6",
    querySource: "sdk",
    createdAt: new Date(0).toISOString(),
    format: TRANSCRIPT_FORMAT,
  });
}

/** Writes `turns` turns the way the main session does: the turn's messages, then the prefix. */
function writeSession(
  path: string,
  turns: number,
  save: (writer: TranscriptWriter, params: CacheSafeParams) => void,
) {
  const writer = new TranscriptWriter(path);
  start(writer);
  const history: Message[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const next = message(turn);
    writer.append({ type: "message", message: next });
    history.push(next);
    save(writer, prefixOf([...history]));
  }
  writer.close();
  return history;
}

describe("R-R12: the request prefix is stored once per change", () => {
  it("R-R12: a 300-turn session's transcript is at most 3× its final conversation (format 1 wrote the prefix every turn), and a resume reads back the exact CacheSafeParams", async () => {
    const path = sessionTranscriptPath(dir, "new");
    const history = writeSession(path, 300, (writer, params) => writer.appendCacheSafeParams(params));
    const oldPath = sessionTranscriptPath(dir, "old");
    writeSession(oldPath, 300, (writer, params) => writer.append({ type: "cache_safe_params", params }));
    const conversation = new Packr({ useRecords: false }).pack(history).length;
    const size = statSync(path).size;
    const oldSize = statSync(oldPath).size;
    console.log(`R-R12 300 turns: format 2 ${size} B, format 1 ${oldSize} B, conversation ${conversation} B`);
    expect(size / conversation).toBeLessThanOrEqual(3);
    expect(oldSize / conversation).toBeGreaterThan(3);

    const read = await readTranscript(path);
    const state = resumedState(read);
    expect(state.messages).toEqual(history);
    expect(state.cacheSafeParams).toEqual(prefixOf(history));
    // Format 1 transcripts stay readable, streamed or whole.
    expect(resumedState(await readTranscript(oldPath)).cacheSafeParams).toEqual(prefixOf(history));
    expect((await loadTranscript(path)).cacheSafeParams).toEqual(prefixOf(history));
  });

  it("R-R12: a changed prefix (another model) is written again; a prefix whose messages are not the history's is written whole; a compaction's history record keeps the fork point right", async () => {
    const path = sessionTranscriptPath(dir, "mixed");
    const writer = new TranscriptWriter(path);
    start(writer);
    const first = [message(0), message(1)];
    writer.appendMessages(first);
    writer.appendCacheSafeParams(prefixOf(first));
    writer.appendCacheSafeParams(prefixOf(first, "claude-opus-4-6"));
    // An edited copy (not what the records hold) cannot be a fork point.
    const edited = [
      first[0] as Message,
      { ...message(1), message: { role: "user" as const, content: "edited" } },
    ];
    writer.appendCacheSafeParams(prefixOf(edited));
    expect((await loadTranscript(path)).cacheSafeParams).toEqual(prefixOf(edited));
    // A fork point, then a compaction replacing the history: the point still means what it named.
    writer.appendCacheSafeParams(prefixOf(first, "claude-opus-4-6"));
    writer.append({ type: "history", messages: [message(7)] });
    writer.close();
    const loaded = await loadTranscript(path);
    const types = loaded.records.map((record) => record.type);
    expect(types.filter((type) => type === "request_prefix")).toHaveLength(2);
    expect(types.filter((type) => type === "cache_safe_params")).toHaveLength(1);
    expect(loaded.cacheSafeParams).toEqual(prefixOf(first, "claude-opus-4-6"));
    expect(resumedState(await readTranscript(path)).cacheSafeParams).toEqual(
      prefixOf(first, "claude-opus-4-6"),
    );
    expect(loaded.messages).toEqual([message(7)]);
  });

  it("R-R12: a transcript from a newer format is refused naming the fix; a resumed writer appends after what the stream read (no second read) and drops a torn tail", async () => {
    const path = sessionTranscriptPath(dir, "future");
    const writer = new TranscriptWriter(path);
    writer.append({
      type: "session_start",
      sessionId: "s",
      agentId: "main",
      cwd: dir,
      model: "m",
      querySource: "sdk",
      createdAt: new Date(0).toISOString(),
      format: TRANSCRIPT_FORMAT + 1,
    });
    writer.close();
    await expect(readTranscript(path)).rejects.toThrow(/newer forkloop .* update forkloop to resume it/);

    const resumable = sessionTranscriptPath(dir, "resumable");
    writeSession(resumable, 3, (w, params) => w.appendCacheSafeParams(params));
    const read = await readTranscript(resumable);
    const again = new TranscriptWriter(resumable, { existing: read });
    expect(again.recordCount).toBe(read.fold.recordCount);
    const history = resumedState(read).messages;
    const next = message(3);
    again.append({ type: "message", message: next });
    again.appendCacheSafeParams(prefixOf([...history, next]));
    again.close();
    const reloaded = await loadTranscript(resumable);
    expect(reloaded.cacheSafeParams).toEqual(prefixOf([...history, next]));
    expect(reloaded.records.filter((record) => record.type === "request_prefix")).toHaveLength(1);
  });
});
