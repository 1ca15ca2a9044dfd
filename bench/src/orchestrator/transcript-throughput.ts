import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Message } from "@forkloop/loop-core";
import { loadTranscript, TranscriptWriter } from "@forkloop/orchestrator";
import { type BenchResult, compare } from "../harness.js";

function sampleMessages(count: number): Message[] {
  const messages: Message[] = [];
  for (let index = 0; index < count; index++) {
    const parentUuid = index === 0 ? null : `m${index - 1}`;
    const timestamp = new Date(1_700_000_000_000 + index).toISOString();
    if (index % 2 === 0) {
      messages.push({
        type: "assistant",
        uuid: `m${index}`,
        parentUuid,
        timestamp,
        message: {
          id: `msg_${index}`,
          type: "message",
          role: "assistant",
          model: "claude-sonnet-5",
          content: [
            { type: "text", text: `Reading the file ${index}.`, citations: null },
            {
              type: "tool_use",
              id: `toolu_${index}`,
              name: "Read",
              input: { file_path: `/repo/src/file-${index}.ts` },
            },
          ],
          stop_reason: "tool_use",
          stop_sequence: null,
          usage: {
            input_tokens: 12,
            output_tokens: 40,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 9000,
          },
        } as unknown as Extract<Message, { type: "assistant" }>["message"],
      });
    } else {
      const lines = Array.from(
        { length: 40 },
        (_, line) => `${String(line + 1).padStart(6)}\tconst value${line} = compute(${line});`,
      );
      messages.push({
        type: "user",
        uuid: `m${index}`,
        parentUuid,
        timestamp,
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `toolu_${index - 1}`, content: lines.join("\n") }],
        },
      });
    }
  }
  return messages;
}

/** Transcript append throughput and resume load time: msgpackr records vs JSON lines. */
export async function transcripts(dir: string): Promise<BenchResult[]> {
  const messages = sampleMessages(4_000);
  const binaryPath = join(dir, "bench.fltr");
  const jsonPath = join(dir, "bench.jsonl");
  // Best of several rounds: the machine is shared, and the fastest round is the least disturbed.
  const rounds = 7;
  let binaryAppend = Number.POSITIVE_INFINITY;
  let jsonAppend = Number.POSITIVE_INFINITY;
  let binaryLoad = Number.POSITIVE_INFINITY;
  let jsonLoad = Number.POSITIVE_INFINITY;
  for (let round = 0; round < rounds; round++) {
    rmSync(binaryPath, { force: true });
    rmSync(jsonPath, { force: true });
    let start = performance.now();
    const writer = new TranscriptWriter(binaryPath);
    for (const message of messages) writer.append({ type: "message", message });
    writer.close();
    binaryAppend = Math.min(binaryAppend, performance.now() - start);

    start = performance.now();
    const fd = openSync(jsonPath, "a");
    for (const message of messages) writeSync(fd, `${JSON.stringify({ type: "message", message })}\n`);
    closeSync(fd);
    jsonAppend = Math.min(jsonAppend, performance.now() - start);

    start = performance.now();
    const loaded = await loadTranscript(binaryPath);
    binaryLoad = Math.min(binaryLoad, performance.now() - start);
    if (loaded.messages.length !== messages.length) throw new Error("msgpackr transcript lost messages");

    start = performance.now();
    const parsed = readFileSync(jsonPath, "utf8")
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as { message: Message });
    jsonLoad = Math.min(jsonLoad, performance.now() - start);
    if (parsed.length !== messages.length) throw new Error("JSON lines transcript lost messages");
  }
  const perSecond = (ms: number) => messages.length / (ms / 1000);
  const sizes = `file size: msgpackr ${(statSync(binaryPath).size / 1e6).toFixed(2)} MB, JSON lines ${(statSync(jsonPath).size / 1e6).toFixed(2)} MB; ${messages.length} messages, best of ${rounds} rounds`;
  return [
    compare(
      "transcript append throughput (higher is better)",
      "records/s",
      "records/s",
      { label: "JSON lines", value: perSecond(jsonAppend) },
      { label: "msgpackr records (len+crc32)", value: perSecond(binaryAppend) },
      sizes,
    ),
    compare(
      "transcript resume load (lower is better)",
      "load time",
      "ms",
      { label: "JSON lines", value: jsonLoad },
      { label: "msgpackr records (len+crc32)", value: binaryLoad },
      sizes,
    ),
  ];
}
