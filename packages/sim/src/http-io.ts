import type { IncomingMessage, ServerResponse } from "node:http";
import { type ApiError, errorBody } from "./api-error.js";
import type { RequestRecord } from "./types.js";

/** The API's request size limit for Messages and count_tokens (api doc §4). */
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export type BodyRead = { ok: true; bytes: Buffer } | { ok: false; tooLarge: true };

/** Reads a request body of at most `maxBytes` (the rest is drained, not kept). */
export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<BodyRead> {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) tooLarge = true;
    else chunks.push(chunk);
  }
  return tooLarge ? { ok: false, tooLarge: true } : { ok: true, bytes: Buffer.concat(chunks) };
}

/** A URL path segment decoded; a malformed escape (e.g. `%E0`) is kept as sent (an unknown id → 404, not 500). */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/** Sends a JSON body; records the status and first byte. */
export function sendJson(
  res: ServerResponse,
  record: RequestRecord | null,
  now: number,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  res.writeHead(status, { ...headers, "content-type": "application/json" });
  res.end(body);
  if (record) {
    record.status = status;
    record.firstByteAt ??= now;
  }
}

/** Sends the API's error body (`{"type":"error",…,"request_id"}`) and records the error. */
export function sendError(
  res: ServerResponse,
  record: RequestRecord | null,
  now: number,
  requestId: string,
  error: ApiError,
  headers: Record<string, string> = {},
): void {
  if (record) record.error = { type: error.type, message: error.message };
  sendJson(res, record, now, error.status, errorBody(error, requestId), headers);
}

export function headerRecord(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[key] = Array.isArray(value) ? value.join(", ") : value;
  }
  return out;
}
