import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { toolPairingViolations } from "./tool-pairing.js";

/**
 * What the hostile server does with one `POST /v1/messages` (R-R1–R-R3). Each is something a
 * broken network, a broken proxy or a prompt-injected model can do to the model client:
 * - `ok`: a valid streamed reply: text, or — when the server has a `toolUse` and the last message
 *   is no tool_result — a call of that tool;
 * - `malformed_sse`: lines that are no SSE, then an event whose data is not JSON;
 * - `truncated_json`: a `message_start` whose JSON is cut off, then the end of the stream;
 * - `silence`: no response at all, not even headers;
 * - `headers_then_silence`: 200 and SSE headers, then nothing, never;
 * - `ping_only`: `ping` events forever;
 * - `drip`: a text reply whose deltas never stop, one every `intervalMs` (inside any idle
 *   timeout): only an overall deadline per attempt ends it (R-R11);
 * - `drop_after`: `events` events of a valid reply, then the connection is destroyed;
 * - `duplicate_ids`: two tool_use blocks with one id, plus one reusing an id from the history;
 * - `deep_input`: a tool_use whose input is nested `depth` levels deep (default 5,000);
 * - `unknown_stop_reason`: a valid text reply with a stop_reason no API version has;
 * - `huge_block`: one text block of `bytes` (default 5 MB) in 64 KiB deltas;
 * - `html_200`: a 200 with an HTML body (a captive portal or a misrouted proxy).
 */
export type HostileBehaviour =
  | { readonly kind: "ok"; readonly text?: string }
  | { readonly kind: "malformed_sse" }
  | { readonly kind: "truncated_json" }
  | { readonly kind: "silence" }
  | { readonly kind: "headers_then_silence" }
  | { readonly kind: "ping_only"; readonly intervalMs?: number }
  | { readonly kind: "drip"; readonly intervalMs?: number }
  | { readonly kind: "drop_after"; readonly events: number }
  | { readonly kind: "duplicate_ids" }
  | { readonly kind: "deep_input"; readonly depth?: number }
  | { readonly kind: "unknown_stop_reason" }
  | { readonly kind: "huge_block"; readonly bytes?: number }
  | { readonly kind: "html_200" };

export type HostileKind = HostileBehaviour["kind"];

export const HOSTILE_KINDS: readonly HostileKind[] = [
  "ok",
  "malformed_sse",
  "truncated_json",
  "silence",
  "headers_then_silence",
  "ping_only",
  "drip",
  "drop_after",
  "duplicate_ids",
  "deep_input",
  "unknown_stop_reason",
  "huge_block",
  "html_200",
];

export interface HostileRequest {
  /** 1-based, over every `POST /v1/messages` this server received. */
  readonly index: number;
  /** The `x-forkloop-query-source` header: which loop sent it (`sdk`, `agent:…`, `batch` …). */
  readonly querySource: string;
  readonly body: { readonly messages?: readonly unknown[]; readonly [key: string]: unknown };
}

export interface HostileRecord {
  readonly index: number;
  readonly kind: HostileKind;
  /** The session the request belongs to (the `x-hostile-session` header, or ""). */
  readonly session: string;
  /** What the request broke of the API's tool_use / tool_result rules (none is the goal). */
  readonly violations: readonly string[];
}

export interface HostileServerOptions {
  readonly behaviour: (request: HostileRequest) => HostileBehaviour;
  /**
   * The tool `ok` replies call before answering, and the hostile tool_use blocks call (default:
   * `ok` answers in text; the others call Glob with a pattern that matches nothing).
   */
  readonly toolUse?: { readonly name: string; readonly input: Record<string, unknown> };
}

export interface HostileServer {
  readonly url: string;
  requests(): readonly HostileRecord[];
  close(): Promise<void>;
}

const DEFAULT_TOOL_USE = { name: "Glob", input: { pattern: "**/*.no-such-extension" } };

/** Starts the hostile model server on a free port (127.0.0.1). */
export async function startHostileServer(options: HostileServerOptions): Promise<HostileServer> {
  const records: HostileRecord[] = [];
  const open = new Set<ServerResponse>();
  const timers = new Set<NodeJS.Timeout>();
  let count = 0;
  const server = createServer((req, res) => {
    void handle(req, res).catch(() => res.destroy());
  });
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readText(req);
    if (req.method !== "POST" || !req.url?.startsWith("/v1/messages")) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"type":"error"}');
      return;
    }
    const body = JSON.parse(text) as HostileRequest["body"];
    const index = ++count;
    const querySource = String(req.headers["x-forkloop-query-source"] ?? "");
    const behaviour = options.behaviour({ index, querySource, body });
    const session = String(req.headers["x-hostile-session"] ?? "");
    records.push({ index, kind: behaviour.kind, session, violations: toolPairingViolations(body.messages) });
    open.add(res);
    res.on("close", () => open.delete(res));
    const reply = new SseReply(res, timers);
    await reply.send(behaviour, body, options.toolUse, index);
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => [...records],
    async close() {
      for (const timer of timers) clearInterval(timer);
      for (const res of open) res.destroy();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections(); // idle keep-alive sockets too
      await closed;
    },
  };
}

async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

type Block =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown; inputJson?: string };

class SseReply {
  constructor(
    private readonly res: ServerResponse,
    private readonly timers: Set<NodeJS.Timeout>,
  ) {}

  async send(
    behaviour: HostileBehaviour,
    body: HostileRequest["body"],
    configured: { name: string; input: Record<string, unknown> } | undefined,
    index: number,
  ): Promise<void> {
    const toolUse = configured ?? DEFAULT_TOOL_USE;
    const res = this.res;
    if (behaviour.kind === "silence") return; // open until the client gives up (or close())
    if (behaviour.kind === "html_200") {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<!doctype html><html><body><h1>Welcome to the hotel Wi-Fi</h1></body></html>");
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.flushHeaders();
    const id = `msg_hostile_${index}`;
    const reusable = lastToolUseId(body.messages);
    switch (behaviour.kind) {
      case "headers_then_silence":
        return; // the response stays open until the client gives up (or close())
      case "ping_only": {
        const timer = setInterval(
          () => res.write(event("ping", { type: "ping" })),
          behaviour.intervalMs ?? 50,
        );
        this.timers.add(timer);
        res.on("close", () => {
          clearInterval(timer);
          this.timers.delete(timer);
        });
        return;
      }
      case "drip": {
        const [start = "", , blockStart = ""] = replyEvents(id, [{ type: "text", text: "" }], "end_turn");
        res.write(start + blockStart);
        const delta = event("content_block_delta", {
          type: "content_block_delta",
          index: 0,
          delta: { type: "text_delta", text: "drip " },
        });
        const timer = setInterval(() => res.write(delta), behaviour.intervalMs ?? 50);
        this.timers.add(timer);
        res.on("close", () => {
          clearInterval(timer);
          this.timers.delete(timer);
        });
        return;
      }
      case "malformed_sse":
        res.end(`this is not SSE\n\n${"event: message_start\ndata: {not json\n\n"}`);
        return;
      case "truncated_json":
        res.end(
          `event: message_start\ndata: {"type":"message_start","message":{"id":"${id}","type":"mess\n\n`,
        );
        return;
      case "drop_after": {
        const events = replyEvents(id, [{ type: "text", text: "this reply will be cut" }], "end_turn");
        await write(res, events.slice(0, Math.max(1, behaviour.events)).join(""));
        await new Promise((resolve) => setTimeout(resolve, 20));
        res.destroy();
        return;
      }
      case "duplicate_ids": {
        const blocks: Block[] = [
          { type: "tool_use", id: "toolu_hostile_dup", name: toolUse.name, input: toolUse.input },
          { type: "tool_use", id: "toolu_hostile_dup", name: toolUse.name, input: toolUse.input },
        ];
        if (reusable)
          blocks.push({ type: "tool_use", id: reusable, name: toolUse.name, input: toolUse.input });
        res.end(replyEvents(id, blocks, "tool_use").join(""));
        return;
      }
      case "deep_input": {
        const depth = behaviour.depth ?? 5_000;
        const inputJson = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
        const block: Block = {
          type: "tool_use",
          id: `toolu_hostile_deep_${index}`,
          name: toolUse.name,
          input: {},
          inputJson,
        };
        res.end(replyEvents(id, [block], "tool_use").join(""));
        return;
      }
      case "unknown_stop_reason":
        res.end(
          replyEvents(id, [{ type: "text", text: "done (hostile)" }], "a_stop_reason_from_the_future").join(
            "",
          ),
        );
        return;
      case "huge_block": {
        const text = "x".repeat(behaviour.bytes ?? 5 * 1024 * 1024);
        for (const chunk of replyEvents(id, [{ type: "text", text }], "end_turn")) await write(res, chunk);
        res.end();
        return;
      }
      case "ok": {
        const answered = !configured || endsWithToolResult(body.messages);
        const blocks: Block[] = answered
          ? [{ type: "text", text: behaviour.text ?? "done (hostile ok)" }]
          : [{ type: "tool_use", id: `toolu_hostile_ok_${index}`, name: toolUse.name, input: toolUse.input }];
        res.end(replyEvents(id, blocks, answered ? "end_turn" : "tool_use").join(""));
        return;
      }
      default: {
        const unreachable: never = behaviour;
        throw new Error(`unknown hostile behaviour ${JSON.stringify(unreachable)}`);
      }
    }
  }
}

/** Resolves once `text` is written or the response closed (its close listener removed again). */
function write(res: ServerResponse, text: string): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = (): void => {
      res.off("close", done);
      resolve();
    };
    res.once("close", done);
    res.write(text, done);
  });
}

function event(name: string, data: unknown): string {
  return `event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

const CHUNK = 64 * 1024;

/** A valid event sequence for `blocks` (api doc §3), big texts and inputs split into deltas. */
function replyEvents(id: string, blocks: readonly Block[], stopReason: string): string[] {
  const usage = {
    input_tokens: 10,
    output_tokens: 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
  const out = [
    event("message_start", {
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model: "hostile",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    }),
    event("ping", { type: "ping" }),
  ];
  for (const [index, block] of blocks.entries()) {
    if (block.type === "text") {
      out.push(
        event("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        }),
      );
      for (let at = 0; at < block.text.length; at += CHUNK) {
        const delta = { type: "text_delta", text: block.text.slice(at, at + CHUNK) };
        out.push(event("content_block_delta", { type: "content_block_delta", index, delta }));
      }
    } else {
      const start = { type: "tool_use", id: block.id, name: block.name, input: {} };
      out.push(event("content_block_start", { type: "content_block_start", index, content_block: start }));
      const json = block.inputJson ?? JSON.stringify(block.input);
      for (let at = 0; at < json.length; at += CHUNK) {
        const delta = { type: "input_json_delta", partial_json: json.slice(at, at + CHUNK) };
        out.push(event("content_block_delta", { type: "content_block_delta", index, delta }));
      }
    }
    out.push(event("content_block_stop", { type: "content_block_stop", index }));
  }
  out.push(
    event("message_delta", {
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 5 },
    }),
    event("message_stop", { type: "message_stop" }),
  );
  return out;
}

interface LooseMessage {
  readonly role?: unknown;
  readonly content?: unknown;
}

function blocksOf(message: unknown): { type?: unknown; id?: unknown }[] {
  const content = (message as LooseMessage | undefined)?.content;
  return Array.isArray(content) ? (content as { type?: unknown; id?: unknown }[]) : [];
}

function endsWithToolResult(messages: readonly unknown[] | undefined): boolean {
  return blocksOf(messages?.at(-1)).some((block) => block.type === "tool_result");
}

function lastToolUseId(messages: readonly unknown[] | undefined): string | undefined {
  for (const message of [...(messages ?? [])].reverse()) {
    for (const block of blocksOf(message)) {
      if (block.type === "tool_use" && typeof block.id === "string") return block.id;
    }
  }
  return undefined;
}
