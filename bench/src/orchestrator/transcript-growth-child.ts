/**
 * One side of the transcript-growth benchmark (R-R12), in its own process so its peak memory
 * (maxRSS) is its own: `run <path> <format>` writes a 300-turn session's transcript the way the
 * main session does (each turn's messages, then the turn's CacheSafeParams, and the request body
 * of each turn serialised as the model client sends it); `resume <path>` reads it back the way
 * `--resume` does and serialises the next request. Prints one JSON line.
 */
import type { CacheSafeParams, Message } from "@forkloop/loop-core";
import { loadTranscript, readTranscript, TranscriptWriter } from "@forkloop/orchestrator";

const TURNS = 300;

function turnMessages(turn: number, parent: string | null): Message[] {
  const assistant = {
    type: "assistant",
    uuid: `a${turn}`,
    parentUuid: parent,
    timestamp: new Date(1_700_000_000_000 + turn).toISOString(),
    message: {
      id: `msg_${turn}`,
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-6",
      content: [
        { type: "text", text: `Reading part ${turn}.` },
        {
          type: "tool_use",
          id: `toolu_${turn}`,
          name: "Read",
          input: { file_path: `/repo/src/f${turn}.ts` },
        },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 10,
        output_tokens: 40,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 9000,
      },
    },
  } as unknown as Message;
  const lines = Array.from(
    { length: 60 },
    (_, line) => `${String(line + 1).padStart(6)}\tconst v${line} = f(${turn}, ${line});`,
  );
  const result = {
    type: "user",
    uuid: `u${turn}`,
    parentUuid: `a${turn}`,
    timestamp: new Date(1_700_000_000_000 + turn).toISOString(),
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${turn}`, content: lines.join("\n") }],
    },
  } as unknown as Message;
  return [assistant, result];
}

function params(history: readonly Message[]): CacheSafeParams {
  return {
    model: "claude-sonnet-4-6",
    systemPrompt: [
      { type: "text", text: "You are forkloop, an agent that reads and edits code. ".repeat(600) },
    ],
    tools: Array.from({ length: 24 }, (_, index) => ({
      name: `Tool${index}`,
      description: "Reads, edits or runs something in the workspace, carefully. ".repeat(30),
      input_schema: { type: "object" as const, properties: { path: { type: "string" } } },
    })),
    maxOutputTokens: 32_000,
    forkContextMessages: history,
  };
}

/** What the model client sends for a turn: the whole request, serialised. */
function requestBody(prefix: CacheSafeParams): number {
  return JSON.stringify({
    model: prefix.model,
    system: prefix.systemPrompt,
    tools: prefix.tools,
    max_tokens: prefix.maxOutputTokens,
    messages: prefix.forkContextMessages.map((message) => ("message" in message ? message.message : null)),
  }).length;
}

async function main(): Promise<void> {
  const [mode, path, format] = process.argv.slice(2) as [string, string, string | undefined];
  let conversationBytes = 0;
  if (mode === "run") {
    const writer = new TranscriptWriter(path);
    writer.append({
      type: "session_start",
      sessionId: "bench",
      agentId: "main",
      cwd: "/repo",
      model: "claude-sonnet-4-6",
      querySource: "sdk",
      createdAt: new Date(0).toISOString(),
      ...(format === "1" ? {} : { format: 2 }),
    });
    let history: Message[] = [];
    for (let turn = 0; turn < TURNS; turn++) {
      const next = turnMessages(turn, history.at(-1)?.uuid ?? null);
      writer.appendMessages(next);
      history = [...history, ...next];
      const prefix = params(history);
      requestBody(prefix);
      if (format === "1") writer.append({ type: "cache_safe_params", params: prefix });
      else writer.appendCacheSafeParams(prefix);
    }
    writer.close();
    conversationBytes = Buffer.byteLength(
      JSON.stringify(history.map((message) => ("message" in message ? message.message : null))),
    );
  } else if (mode === "resume") {
    const read = await readTranscript(path);
    const prefix = read.fold.cacheSafeParams();
    if (prefix === undefined) throw new Error("no prefix read back");
    requestBody(prefix);
    new TranscriptWriter(path, { existing: read }).close();
  } else if (mode === "resume-whole") {
    // Before R-R12: the whole file loaded, every record kept, then read again by the writer.
    const loaded = await loadTranscript(path);
    if (loaded.cacheSafeParams === undefined) throw new Error("no prefix read back");
    requestBody(loaded.cacheSafeParams);
    new TranscriptWriter(path).close();
  }
  process.stdout.write(
    `${JSON.stringify({ maxRssBytes: process.resourceUsage().maxRSS * 1024, conversationBytes })}\n`,
  );
}

await main();
