import type { ServerResponse } from "node:http";
import { type ApiError, apiError, invalidRequest, isApiError } from "./api-error.js";
import { decodePathSegment, sendError, sendJson } from "./http-io.js";
import type { SimState } from "./sim-state.js";
import type { RequestRecord } from "./types.js";

export interface BatchCall {
  method: string;
  url: URL;
  /** `http://host:port` the client reached, for `results_url`. */
  base: string;
  apiKey: string;
  version: string;
  betas: readonly string[];
}

/**
 * Routes `/v1/messages/batches[/{id}[/cancel|/results]]` (R-D4) to the batch store: create,
 * list, retrieve, cancel, delete, results (JSONL). Paths as the SDK's `messages.batches.*` calls.
 */
export async function handleBatches(
  state: SimState,
  call: BatchCall,
  text: string,
  record: RequestRecord,
  res: ServerResponse,
): Promise<void> {
  const now = state.clock();
  const send = (answer: object | ApiError, status = 200): void => {
    if (isApiError(answer)) sendError(res, record, now, record.id, answer);
    else sendJson(res, record, now, status, JSON.stringify(answer));
  };
  const parts = call.url.pathname.split("/").filter(Boolean).slice(3); // after v1/messages/batches
  const [id, action] = parts.map(decodePathSegment);
  const store = state.batches;
  if (parts.length === 0 && call.method === "POST") {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return send(invalidRequest("There was an error parsing the body of your request: invalid JSON"));
    }
    const created = store.create(state, json, call);
    return send(created.ok ? created.batch : created.error);
  }
  if (parts.length === 0 && call.method === "GET") {
    return send(await store.list(state, call.apiKey, call.url.searchParams, call.base));
  }
  if (id !== undefined && parts.length === 1 && call.method === "GET") {
    return send(await store.get(state, call.apiKey, id, call.base));
  }
  if (id !== undefined && parts.length === 1 && call.method === "DELETE") {
    return send(await store.delete(state, call.apiKey, id));
  }
  if (id !== undefined && action === "cancel" && parts.length === 2 && call.method === "POST") {
    return send(await store.cancel(state, call.apiKey, id, call.base));
  }
  if (id !== undefined && action === "results" && parts.length === 2 && call.method === "GET") {
    const results = await store.results(state, call.apiKey, id);
    if (isApiError(results)) return send(results);
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": "application/binary" });
    res.end(results);
    record.status = 200;
    return;
  }
  return send(apiError(404, "Not found"));
}
