import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { type ApiError, apiError, invalidRequest } from "./api-error.js";
import { handleBatches } from "./batch-routes.js";
import { page } from "./batches.js";
import { builtinPolicyBrain } from "./brains/builtin-policy.js";
import { scriptedBrain } from "./brains/scripted.js";
import { handleFiles } from "./file-routes.js";
import { MAX_FILE_BYTES } from "./files.js";
import { handleMessages } from "./handle-messages.js";
import { decodePathSegment, headerRecord, readBody, sendError, sendJson } from "./http-io.js";
import { REALISTIC_LATENCY } from "./latency.js";
import { listModelInfos, modelInfo } from "./models-api.js";
import type { CountTokensRequest } from "./request-schema.js";
import { addRecord, createState, type SimState } from "./sim-state.js";
import type { RequestRecord, Simulator, SimulatorOptions } from "./types.js";
import {
  type RequestContext,
  type ValidRequest,
  validateCountTokensRequest,
  validateMessagesRequest,
} from "./validate-request.js";

/** Room for the multipart framing around an upload's file part. */
const UPLOAD_FORM_OVERHEAD = 64 * 1024;

/** Both API versions clients send today (api doc §0). */
const SUPPORTED_VERSIONS = new Set(["2023-06-01", "2026-10-21"]);

/** Starts the simulator on 127.0.0.1 (or `options.host`). Close it with `close()`. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  if (options.brain && options.scenario)
    throw new TypeError("startSimulator: pass either brain or scenario, not both");
  const clock = options.clock ?? Date.now;
  const latency = options.latency ?? "none";
  const web = options.web ?? options.scenario?.web;
  const state = createState({
    models: options.models ?? [],
    clock,
    seed: options.seed ?? 0,
    brain: options.brain ?? (options.scenario ? scriptedBrain(options.scenario) : builtinPolicyBrain),
    faults: options.faults,
    latency: latency === "none" ? null : latency === "realistic" ? REALISTIC_LATENCY : latency,
    rateLimits: options.rateLimits ?? {},
    recordLimit: options.recordLimit ?? Number.POSITIVE_INFINITY,
    ...(options.batches ? { batches: options.batches } : {}),
    ...(options.files ? { files: options.files } : {}),
    ...(web ? { web } : {}),
  });
  const server = createServer((req, res) => {
    handle(state, req, res).catch((error: unknown) => {
      // A bug in the simulator: answer 500 rather than hang the client.
      if (!res.headersSent && !res.destroyed) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: String(error) } }));
      } else {
        res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  let closed: Promise<void> | null = null;
  return {
    url: `http://${options.host ?? "127.0.0.1"}:${port}`,
    port,
    requests: () => state.records,
    clearRequests: () => {
      state.records = [];
    },
    setBrain: (brain) => {
      state.brain = brain;
    },
    setFaults: (faults) => {
      state.faults = faults;
    },
    close: () => {
      closed ??= new Promise<void>((resolve) => {
        state.sleeper.cancelAll();
        server.close(() => resolve());
        server.closeAllConnections();
      });
      return closed;
    },
  };
}

async function handle(state: SimState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const requestId = `req_sim_${randomBytes(12).toString("hex")}`;
  // Every response carries a request-id, errors included (api doc §0).
  res.setHeader("request-id", requestId);
  const url = new URL(req.url ?? "/", "http://127.0.0.1");
  const path = url.pathname;
  const method = req.method ?? "GET";

  if (path.startsWith("/_sim/")) {
    await readBody(req);
    return handleControl(state, path, method, requestId, res);
  }
  const t0 = performance.now();
  // Taken before the body is read: a response that starts meanwhile wrote nothing this request can read.
  const arrival = state.cache.arrive();
  const record = newRecord(state, requestId, path, req);
  addRecord(state, record);
  res.once("close", () => {
    record.endedAt = state.clock();
    record.latencyMs = performance.now() - t0;
  });
  const fail = (error: ApiError): void => sendError(res, record, state.clock(), requestId, error);
  // A file upload may be as large as a file (Files guide: 500 MB); it is not kept as text.
  const upload = method === "POST" && path === "/v1/files";
  // A Message Batch may be 256 MB (batch processing page), past the Messages API's 32 MB.
  const batchCreate = method === "POST" && path === "/v1/messages/batches";
  const read = await readBody(
    req,
    upload ? MAX_FILE_BYTES + UPLOAD_FORM_OVERHEAD : batchCreate ? state.batches.maxBytes : undefined,
  );
  if (!read.ok) return fail(apiError(413));
  const text = upload ? "" : read.bytes.toString("utf8");
  record.rawBody = text;

  if (method === "HEAD" && path === "/") {
    res.writeHead(200).end();
    record.status = 200;
    return;
  }
  const route =
    method === "POST" && path === "/v1/messages"
      ? "messages"
      : method === "POST" && path === "/v1/messages/count_tokens"
        ? "count_tokens"
        : method === "GET" && path.startsWith("/v1/models")
          ? "models"
          : path.startsWith("/v1/messages/batches")
            ? "batches"
            : path === "/v1/files" || path.startsWith("/v1/files/")
              ? "files"
              : null;
  if (!route) return fail(apiError(404, "Not found"));

  const apiKey = apiKeyOf(req);
  if (apiKey === null) {
    return fail(apiError(401, "x-api-key header is required"));
  }
  const version = req.headers["anthropic-version"];
  if (typeof version !== "string") {
    return fail(invalidRequest("anthropic-version: header is required"));
  }
  if (!SUPPORTED_VERSIONS.has(version)) {
    return fail(invalidRequest(`anthropic-version: "${version}" is not a valid version`));
  }
  if (route === "models") return handleModels(state, url, record, res);
  if (route === "files") {
    const contentType = req.headers["content-type"] ?? "";
    return handleFiles(state, { method, url, apiKey, contentType }, read.bytes, record, res);
  }
  if (route === "batches") {
    const base = `http://${req.headers.host ?? "127.0.0.1"}`;
    return handleBatches(
      state,
      { method, url, base, apiKey, version, betas: betasOf(req) },
      text,
      record,
      res,
    );
  }
  // From here on every answer, an error too, carries the key's rate-limit headers.
  const rateHeaders = state.limiter.peek(apiKey);
  const refuse = (error: ApiError): void =>
    sendError(res, record, state.clock(), requestId, error, rateHeaders);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return refuse(invalidRequest("There was an error parsing the body of your request: invalid JSON"));
  }
  if (json && typeof json === "object" && "model" in json && typeof json.model === "string")
    record.model = json.model;
  if (json && typeof json === "object" && "stream" in json) record.stream = json.stream === true;
  const ctx: RequestContext = {
    registry: state.registry,
    version,
    betas: betasOf(req),
    issuedThinking: state.issuedThinking,
    files: state.files.lookup(apiKey, state.clock()),
    images: state.web.images,
  };

  if (route === "count_tokens") {
    const valid = validateCountTokensRequest(json, ctx);
    if (!valid.ok) return refuse(valid.error);
    return sendJson(
      res,
      record,
      state.clock(),
      200,
      JSON.stringify(countTokensBody(valid.value)),
      rateHeaders,
    );
  }
  // A thread request stands for its whole conversation (threads.ts): rebuild it first.
  const expanded = state.threads.expand(json, apiKey, ctx.betas, state.clock());
  if (!expanded.ok) return refuse(expanded.error);
  const valid = validateMessagesRequest(expanded.body, ctx);
  if (!valid.ok) return refuse(valid.error);
  await handleMessages({
    state,
    req,
    res,
    record,
    apiKey,
    betas: ctx.betas,
    valid: valid.value,
    arrival,
    ...(expanded.thread ? { thread: expanded.thread } : {}),
  });
}

/** `{input_tokens}`, plus the beta's `context_management.original_input_tokens` (api doc §6). */
function countTokensBody(valid: ValidRequest<CountTokensRequest>): object {
  const input_tokens = valid.layout.totalTokens;
  if (!valid.contextManagement) return { input_tokens };
  return {
    input_tokens,
    context_management: { original_input_tokens: valid.contextManagement.originalInputTokens },
  };
}

/** `GET /v1/models` (paged, newest first) and `GET /v1/models/{id}` (R-D4, models-api.ts). */
function handleModels(state: SimState, url: URL, record: RequestRecord, res: ServerResponse): void {
  const now = state.clock();
  const path = url.pathname;
  if (path === "/v1/models" || path === "/v1/models/") {
    const body = page(listModelInfos(state.registry), url.searchParams);
    sendJson(res, record, now, 200, JSON.stringify(body));
    return;
  }
  const id = decodePathSegment(path.slice("/v1/models/".length));
  const spec = state.registry.resolve(id);
  if (!spec) {
    sendError(res, record, now, record.id, apiError(404, `model: ${id}`));
    return;
  }
  sendJson(res, record, now, 200, JSON.stringify(modelInfo(spec)));
}

function handleControl(
  state: SimState,
  path: string,
  method: string,
  requestId: string,
  res: ServerResponse,
): void {
  const now = state.clock();
  if (method === "GET" && path === "/_sim/health") {
    sendJson(res, null, now, 200, JSON.stringify({ status: "ok", simulator: "forkloop" }));
  } else if (method === "GET" && path === "/_sim/requests") {
    sendJson(res, null, now, 200, JSON.stringify(state.records));
  } else {
    sendError(res, null, now, requestId, apiError(404, "Not found"));
  }
}

function newRecord(state: SimState, id: string, path: string, req: IncomingMessage): RequestRecord {
  const querySource = req.headers["x-forkloop-query-source"];
  return {
    id,
    path,
    headers: headerRecord(req),
    rawBody: "",
    model: null,
    stream: false,
    status: 0,
    querySource: typeof querySource === "string" ? querySource : null,
    usage: null,
    costUsd: 0,
    latencyMs: 0,
    fault: null,
    error: null,
    startedAt: state.clock(),
    firstByteAt: null,
    endedAt: null,
  };
}

/** `x-api-key` (SDK 0.x, Claude Code) or `Authorization: Bearer` (SDK 1.x) — api doc §0. */
function apiKeyOf(req: IncomingMessage): string | null {
  const key = req.headers["x-api-key"];
  if (typeof key === "string" && key !== "") return key;
  const auth = req.headers.authorization;
  const match = typeof auth === "string" ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
  return match?.[1] ?? null;
}

function betasOf(req: IncomingMessage): string[] {
  const header = req.headers["anthropic-beta"];
  const text = Array.isArray(header) ? header.join(",") : (header ?? "");
  return text
    .split(",")
    .map((b) => b.trim())
    .filter(Boolean);
}
