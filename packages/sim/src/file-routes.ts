import type { ServerResponse } from "node:http";
import busboy from "busboy";
import { type ApiError, apiError, invalidRequest, isApiError } from "./api-error.js";
import { extensionFor, storedMimeType } from "./file-mime-type.js";
import { MAX_FILE_BYTES } from "./files.js";
import { decodePathSegment, sendError, sendJson } from "./http-io.js";
import type { SimState } from "./sim-state.js";
import type { RequestRecord } from "./types.js";

export interface FileCall {
  method: string;
  url: URL;
  apiKey: string;
  /** The request's `content-type` (an upload is `multipart/form-data; boundary=…`). */
  contentType: string;
}

/**
 * Routes the Files API (R-D4, files.ts): `POST /v1/files` (multipart upload), `GET /v1/files`
 * (paged), `GET /v1/files/{id}`, `GET /v1/files/{id}/content` (download), `DELETE
 * /v1/files/{id}` — the paths of the SDK's `files.*` and `beta.files.*` calls.
 */
export async function handleFiles(
  state: SimState,
  call: FileCall,
  body: Buffer,
  record: RequestRecord,
  res: ServerResponse,
): Promise<void> {
  const now = state.clock();
  const send = (answer: object | ApiError): void => {
    if (isApiError(answer)) sendError(res, record, now, record.id, answer);
    else sendJson(res, record, now, 200, JSON.stringify(answer));
  };
  const parts = call.url.pathname.split("/").filter(Boolean).slice(2); // after v1/files
  const [id, action] = parts.map(decodePathSegment);
  const store = state.files;
  if (parts.length === 0 && call.method === "POST") {
    const upload = await readUpload(call.contentType, body);
    if (isApiError(upload)) return send(upload);
    return send(store.upload(call.apiKey, upload, now));
  }
  if (parts.length === 0 && call.method === "GET")
    return send(store.list(call.apiKey, call.url.searchParams));
  if (id !== undefined && parts.length === 1 && call.method === "GET") {
    const file = store.get(call.apiKey, id);
    return send(isApiError(file) ? file : file.meta);
  }
  if (id !== undefined && parts.length === 1 && call.method === "DELETE")
    return send(store.delete(call.apiKey, id));
  if (id !== undefined && action === "content" && parts.length === 2 && call.method === "GET") {
    const file = store.content(call.apiKey, id, now, "download");
    if (isApiError(file)) return send(file);
    if (res.destroyed) return;
    res.writeHead(200, { "content-type": file.meta.mime_type, "content-length": file.bytes.length });
    res.end(file.bytes);
    record.status = 200;
    record.firstByteAt ??= now;
    return;
  }
  return send(apiError(404, "Not found"));
}

interface Upload {
  filename: string;
  mimeType: string;
  bytes: Buffer;
  expiresInSeconds?: number;
}

/**
 * The multipart body of an upload: the `file` part (its filename's final path component, or
 * `unnamed` plus an extension for its type — upload reference; the SDK sends a part without a
 * filename for a nameless file, which undici's parser would turn into text, so busboy reads it)
 * and `expires_in_seconds`.
 */
async function readUpload(contentType: string, body: Buffer): Promise<Upload | ApiError> {
  if (!/^multipart\/form-data\b/i.test(contentType)) {
    return invalidRequest("Content-Type must be multipart/form-data");
  }
  const parts = await parseForm(contentType, body);
  if (parts === null) {
    return invalidRequest("There was an error parsing the body of your request: invalid multipart/form-data");
  }
  const file = parts.files.get("file");
  if (!file) return invalidRequest("file: Field required");
  const named = file.filename.split(/[\\/]/).at(-1) ?? "";
  const mimeType = storedMimeType(file.bytes, file.mimeType, named);
  const filename = named !== "" ? named : `unnamed${extensionFor(mimeType)}`;
  if (filename.length > 500)
    return invalidRequest("file.filename: String should have at most 500 characters");
  const expires = parts.fields.get("expires_in_seconds");
  const upload: Upload = { filename, mimeType, bytes: file.bytes };
  if (expires !== undefined) upload.expiresInSeconds = expires.trim() === "" ? Number.NaN : Number(expires);
  return upload;
}

interface FormParts {
  fields: Map<string, string>;
  files: Map<string, { filename: string; mimeType: string; bytes: Buffer }>;
}

/**
 * A multipart body's parts, or null when it does not parse. busboy reads a part as a file only
 * when it has a filename (or is application/octet-stream); the SDK sends a nameless file as a part
 * with a type and no filename, so a `file` field is taken as a file too — its value read as
 * latin1, which maps bytes to characters one to one, so no byte is lost.
 */
function parseForm(contentType: string, body: Buffer): Promise<FormParts | null> {
  return new Promise((resolve) => {
    const parts: FormParts = { fields: new Map(), files: new Map() };
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { "content-type": contentType },
        defCharset: "latin1",
        limits: { fieldSize: MAX_FILE_BYTES, fileSize: MAX_FILE_BYTES },
      });
    } catch {
      resolve(null);
      return;
    }
    parser.on("field", (name, value, info) => {
      if (name === "file") {
        parts.files.set(name, { filename: "", mimeType: info.mimeType, bytes: Buffer.from(value, "latin1") });
      } else {
        parts.fields.set(name, value);
      }
    });
    parser.on("file", (name, stream, info) => {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () =>
        parts.files.set(name, {
          filename: info.filename ?? "",
          mimeType: info.mimeType,
          bytes: Buffer.concat(chunks),
        }),
      );
    });
    parser.on("error", () => resolve(null));
    parser.on("close", () => resolve(parts));
    parser.end(body);
  });
}
