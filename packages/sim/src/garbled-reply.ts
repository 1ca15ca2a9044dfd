import type { ServerResponse } from "node:http";
import type { FaultDecision } from "./faults.js";
import type { RequestRecord } from "./types.js";

/** The fault kinds whose body is no reply at all (R-R1: retried as malformed; R-R9: a wrong endpoint). */
const GARBLED_FAULTS = ["malformed_sse", "truncated_json", "html_200"] as const;
export type GarbledFault = (typeof GARBLED_FAULTS)[number];

export function isGarbledFault(fault: FaultDecision): fault is FaultDecision & { kind: GarbledFault } {
  return (GARBLED_FAULTS as readonly string[]).includes(fault.kind);
}

/** What a captive portal or a misrouted proxy answers in place of the API (R-R9). */
export const CAPTIVE_PORTAL_PAGE =
  "<!doctype html><html><body><h1>Welcome to the hotel Wi-Fi</h1></body></html>";

/**
 * A 200 whose body no client can read as a reply, streamed request or not: `malformed_sse` sends
 * lines that are no SSE, then a `message_start` event whose data is not JSON; `truncated_json` a
 * `message_start` whose JSON is cut off mid-way, then the end of the stream; `html_200` an HTML
 * page as `text/html`.
 */
export function sendGarbled(
  res: ServerResponse,
  record: RequestRecord,
  fault: FaultDecision & { kind: GarbledFault },
  now: number,
  headers: Record<string, string>,
): void {
  record.status = 200;
  record.firstByteAt = now;
  if (fault.kind === "html_200") {
    res.writeHead(200, { ...headers, "content-type": "text/html" });
    res.end(CAPTIVE_PORTAL_PAGE);
    return;
  }
  res.writeHead(200, {
    ...headers,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
  });
  if (fault.kind === "malformed_sse") {
    res.end("this is not SSE\n\nevent: message_start\ndata: {not json\n\n");
    return;
  }
  res.end(
    `event: message_start\ndata: {"type":"message_start","message":{"id":"msg_sim_${record.id}","type":"mess\n\n`,
  );
}
