import type { ServerResponse } from "node:http";
import type { FaultDecision } from "./faults.js";
import { formatEvent } from "./sse-events.js";
import type { RequestRecord } from "./types.js";

/** The fault kinds that answer nothing the client can finish (R-R1–R-R3, R-R11). */
const STALL_FAULTS = ["silence", "headers_then_silence", "ping_only", "drip"] as const;
export type StallFault = (typeof STALL_FAULTS)[number];

export function isStallFault(fault: FaultDecision): fault is FaultDecision & { kind: StallFault } {
  return (STALL_FAULTS as readonly string[]).includes(fault.kind);
}

/**
 * A reply that never ends, as a broken network or proxy gives it: `silence` sends not even
 * headers; `headers_then_silence` sends 200 and SSE headers, then nothing; `ping_only` sends
 * `ping` events every `slowMs` forever; `drip` starts a text reply (`message_start`, a text
 * block) and sends one `text_delta` every `slowMs` forever — activity inside any idle timeout,
 * so only an overall deadline per attempt ends it (R-R11). Only the client's deadlines (or the
 * simulator's close, which destroys every open connection) end them.
 */
export function sendStall(
  res: ServerResponse,
  record: RequestRecord,
  fault: FaultDecision & { kind: StallFault },
  now: number,
  headers: Record<string, string>,
): void {
  if (fault.kind === "silence") return;
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  res.flushHeaders();
  record.status = 200;
  record.firstByteAt = now;
  if (fault.kind === "headers_then_silence") return;
  if (fault.kind === "drip") res.write(dripStart(record));
  const repeated =
    fault.kind === "drip"
      ? formatEvent({
          event: "content_block_delta",
          data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "drip " } },
        })
      : formatEvent({ event: "ping", data: { type: "ping" } });
  const timer = setInterval(() => res.write(repeated), fault.slowMs);
  res.on("close", () => clearInterval(timer));
}

/** The start of the reply a drip never finishes: `message_start`, then a text block's start. */
function dripStart(record: RequestRecord): string {
  const message = {
    id: `msg_sim_drip_${record.id}`,
    type: "message",
    role: "assistant",
    content: [],
    model: record.model ?? "",
    stop_reason: null,
    stop_sequence: null,
    usage: { input_tokens: 1, output_tokens: 1 },
  };
  return (
    formatEvent({ event: "message_start", data: { type: "message_start", message } }) +
    formatEvent({
      event: "content_block_start",
      data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    })
  );
}
