import { randomBytes } from "node:crypto";
import { type ApiError, apiError, invalidRequest } from "./api-error.js";

/**
 * The Files API's store (R-D4): files uploaded once and referenced by `file_id` in `document`,
 * `image` and `container_upload` blocks. Files API guide
 * (https://platform.claude.com/docs/en/build-with-claude/files) and reference
 * (https://platform.claude.com/docs/en/api/files/upload, …/list, …/download): the Files API is
 * generally available, so no beta header is needed (`files-api-2025-04-14` is still accepted);
 * files are scoped to the API key (the simulator's workspace) and kept until deleted or expired.
 */
export interface FileMetadata {
  type: "file";
  id: string;
  created_at: string;
  filename: string;
  mime_type: string;
  size_bytes: number;
  /** Only files a tool created (the code execution tool) can be downloaded. */
  downloadable: boolean;
  expires_at: string | null;
}

export interface StoredFile {
  meta: FileMetadata;
  bytes: Buffer;
  /** Milliseconds on the simulator's clock; null = never expires. */
  expiresAtMs: number | null;
}

export interface FileOptions {
  /** Bytes one API key may store (Files guide: 100 GB per organization; UNCONFIRMED since GA). */
  storageLimitBytes?: number;
}

/** Files guide, "File storage and limits": 500 MB per file. */
export const MAX_FILE_BYTES = 500 * 1024 * 1024;
const DEFAULT_STORAGE_LIMIT = 100 * 1024 ** 3;
/** Upload reference: `expires_in_seconds` between one hour and ninety days. */
const MIN_EXPIRY_SECONDS = 3600;
const MAX_EXPIRY_SECONDS = 7_776_000;
/** List reference: `limit` 1–1000 (default 20), `ids` at most 100. */
const MAX_LIST_IDS = 100;

export type FileLookup = (fileId: string) => StoredFile | ApiError;

export class FileStore {
  /** Per API key, in upload order. */
  private readonly byKey = new Map<string, Map<string, StoredFile>>();
  private readonly storageLimit: number;

  constructor(options: FileOptions = {}) {
    this.storageLimit = options.storageLimitBytes ?? DEFAULT_STORAGE_LIMIT;
  }

  upload(
    apiKey: string,
    file: {
      filename: string;
      mimeType: string;
      bytes: Buffer;
      expiresInSeconds?: number;
      downloadable?: boolean;
    },
    now: number,
  ): FileMetadata | ApiError {
    if (file.bytes.length > MAX_FILE_BYTES) {
      return apiError(
        413,
        `File size ${file.bytes.length} bytes exceeds the maximum of ${MAX_FILE_BYTES} bytes.`,
      );
    }
    const expiry = file.expiresInSeconds;
    if (expiry !== undefined) {
      if (!Number.isFinite(expiry))
        return invalidRequest("expires_in_seconds: Input should be a valid number");
      if (expiry < MIN_EXPIRY_SECONDS)
        return invalidRequest(
          `expires_in_seconds: Input should be greater than or equal to ${MIN_EXPIRY_SECONDS}`,
        );
      if (expiry > MAX_EXPIRY_SECONDS)
        return invalidRequest(
          `expires_in_seconds: Input should be less than or equal to ${MAX_EXPIRY_SECONDS}`,
        );
    }
    const files = this.filesOf(apiKey);
    let used = 0;
    for (const stored of files.values()) used += stored.bytes.length;
    if (used + file.bytes.length > this.storageLimit) {
      return invalidRequest(
        "Your file storage quota is exhausted. Delete files to free up space, then retry the upload.",
        "storage_quota_exceeded",
      );
    }
    const expiresAtMs = expiry === undefined ? null : now + expiry * 1000;
    const meta: FileMetadata = {
      type: "file",
      id: `file_${randomBytes(12).toString("hex")}`,
      created_at: new Date(now).toISOString(),
      filename: file.filename,
      mime_type: file.mimeType,
      size_bytes: file.bytes.length,
      downloadable: file.downloadable === true,
      expires_at: expiresAtMs === null ? null : new Date(expiresAtMs).toISOString(),
    };
    files.set(meta.id, { meta, bytes: file.bytes, expiresAtMs });
    return meta;
  }

  /**
   * `GET /v1/files`: newest first, `limit` (1–1000, default 20) and `page` (an opaque cursor,
   * prefixed `page_`, from the previous page's `next_page`), or `ids` (at most 100, a single page,
   * unknown ids left out; not with `page` or `limit`).
   */
  list(apiKey: string, query: URLSearchParams): object | ApiError {
    const newestFirst = [...this.filesOf(apiKey).values()].reverse().map((f) => f.meta);
    // The SDK sends `ids[]=a&ids[]=b` (qs brackets); `ids=a,b` is read too.
    const ids = [...query.getAll("ids"), ...query.getAll("ids[]")].flatMap((value) => value.split(","));
    if (ids.length > 0) {
      if (query.has("page") || query.has("limit"))
        return invalidRequest("ids: cannot be combined with page or limit");
      const wanted = new Set(ids);
      if (wanted.size > MAX_LIST_IDS)
        return invalidRequest(
          `ids: List should have at most ${MAX_LIST_IDS} items after validation, not ${wanted.size}`,
        );
      return { data: newestFirst.filter((meta) => wanted.has(meta.id)), next_page: null };
    }
    const limitText = query.get("limit");
    const limit = limitText === null ? 20 : Number(limitText);
    if (!Number.isInteger(limit)) return invalidRequest("limit: Input should be a valid integer");
    if (limit < 1) return invalidRequest("limit: Input should be greater than or equal to 1");
    if (limit > 1000) return invalidRequest("limit: Input should be less than or equal to 1000");
    const cursor = query.get("page");
    let start = 0;
    if (cursor !== null) {
      const after = cursor.startsWith("page_") ? cursor.slice("page_".length) : null;
      const index = after === null ? -1 : newestFirst.findIndex((meta) => meta.id === after);
      if (index < 0) return invalidRequest(`page: invalid page cursor ${JSON.stringify(cursor)}`);
      start = index + 1;
    }
    const data = newestFirst.slice(start, start + limit);
    const last = data.at(-1);
    const more = start + limit < newestFirst.length;
    return { data, next_page: more && last ? `page_${last.id}` : null };
  }

  /** The file of this key, or the 404 the API answers for an id it cannot see. */
  get(apiKey: string, id: string): StoredFile | ApiError {
    return this.filesOf(apiKey).get(id) ?? apiError(404, `File not found: ${id}`);
  }

  delete(apiKey: string, id: string): object | ApiError {
    const files = this.filesOf(apiKey);
    if (!files.delete(id)) return apiError(404, `File not found: ${id}`);
    return { id, type: "file_deleted" };
  }

  /**
   * A file's bytes for a download or a Messages request: an expired file's bytes are gone
   * (`file_expired`, SDK 1.14's FileExpiredError); only a tool's output may be downloaded
   * (`file_not_downloadable`, FileNotDownloadableError; wording UNCONFIRMED).
   */
  content(apiKey: string, id: string, now: number, purpose: "download" | "message"): StoredFile | ApiError {
    const file = this.get(apiKey, id);
    if ("status" in file) return file;
    if (file.expiresAtMs !== null && now >= file.expiresAtMs) {
      return {
        ...apiError(404, `File ${id} has expired and its content is no longer available.`),
        errorCode: "file_expired",
      };
    }
    if (purpose === "download" && !file.meta.downloadable) {
      return invalidRequest(
        `File ${id} cannot be downloaded: only files created by a tool, such as the code execution tool, can be downloaded.`,
        "file_not_downloadable",
      );
    }
    return file;
  }

  /** A lookup for one request's `file_id` sources (Messages requests read a file's content). */
  lookup(apiKey: string, now: number): FileLookup {
    return (id) => this.content(apiKey, id, now, "message");
  }

  private filesOf(apiKey: string): Map<string, StoredFile> {
    let files = this.byKey.get(apiKey);
    if (!files) {
      files = new Map();
      this.byKey.set(apiKey, files);
    }
    return files;
  }
}
