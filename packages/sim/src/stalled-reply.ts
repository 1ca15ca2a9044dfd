import type { ServerResponse } from "node:http";
import type { FaultDecision } from "./faults.js";
import { formatEvent } from "./sse-events.js";
import type { RequestRecord } from "./types.js";

/** The fault kinds that answer nothing the client can finish (R-R1–R-R3, R-R11). */
export const STALL_FAULTS = ["silence", "headers_then_silence", "ping_only"] as const;
export type StallFault = (typeof STALL_FAULTS)[number];

export function isStallFault(fault: FaultDecision): fault is FaultDecision & { kind: StallFault } {
  return (STALL_FAULTS as readonly string[]).includes(fault.kind);
}

/**
 * A reply that never ends, as a broken network or proxy gives it: `silence` sends not even
 * headers; `headers_then_silence` sends 200 and SSE headers, then nothing; `ping_only` sends
 * `ping` events every `slowMs` forever. Only the client's deadlines (or the simulator's close,
 * which destroys every open connection) end it.
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
  const ping = formatEvent({ event: "ping", data: { type: "ping" } });
  const timer = setInterval(() => res.write(ping), fault.slowMs);
  res.on("close", () => clearInterval(timer));
}
