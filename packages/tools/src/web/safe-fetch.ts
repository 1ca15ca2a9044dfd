import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP } from "node:net";
import type { Readable } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { privateAddressReason } from "./address-policy.js";

/** Bytes of a response body kept (after decompression); the rest is cut and said so (R-T6). */
const WEB_FETCH_MAX_BYTES = 10 * 1024 * 1024;
/** The whole fetch, redirects included. */
const WEB_FETCH_TIMEOUT_MS = 60_000;
/** Same-host redirects followed before giving up. */
const WEB_FETCH_MAX_REDIRECTS = 10;

export interface SafeFetchOptions {
  /**
   * Hosts (names or IP literals, lower case) that may be private or loopback addresses — the
   * tests' own server. Nothing else reaches a private address, whatever its name resolves to.
   */
  readonly allowPrivateHosts?: readonly string[];
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
  /** Test seam: the resolver (default dns.lookup). */
  readonly lookup?: typeof dnsLookup;
}

export type SafeFetchResult =
  | {
      readonly kind: "page";
      readonly url: string;
      readonly status: number;
      readonly statusText: string;
      readonly contentType: string;
      readonly body: Buffer;
      /** The body went past maxBytes: `body` is its first maxBytes. */
      readonly truncated: boolean;
    }
  | { readonly kind: "redirect"; readonly from: string; readonly to: string; readonly status: number }
  | { readonly kind: "refused"; readonly reason: string };

/**
 * Parses and judges a URL the model gave: http(s) only, no credentials, a host with a dot (or an
 * allowed one). http is upgraded to https, as Claude Code does, except for an allowed host.
 */
function checkUrl(raw: string, allowPrivateHosts: readonly string[] = []): URL | string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return `Invalid URL: ${JSON.stringify(raw.slice(0, 200))}. Give a full http:// or https:// URL.`;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return `WebFetch fetches only http and https URLs; ${url.protocol} is refused.`;
  }
  if (url.username !== "" || url.password !== "") {
    return "URLs with a user name or password are refused; WebFetch sends no credentials.";
  }
  const host = hostOf(url);
  const allowed = allowPrivateHosts.includes(host);
  if (!allowed && isIP(host) === 0 && !host.includes(".")) {
    return `WebFetch refuses ${host}: a host name without a dot is a local name (use curl through Bash for a local server).`;
  }
  if (!allowed && isIP(host) !== 0) {
    const reason = privateAddressReason(host);
    if (reason !== undefined) return privateRefusal(host, host, reason);
  }
  if (url.protocol === "http:" && !allowed) url.protocol = "https:";
  return url;
}

/** The URL's host as the address check sees it: lower case, IPv6 without brackets. */
function hostOf(url: URL): string {
  return url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
}

function privateRefusal(host: string, address: string, reason: string): string {
  return (
    `WebFetch refuses ${host}: it ${host === address ? "is" : `resolves to ${address}, which is`} a ${reason} address, ` +
    "and private, loopback and link-local addresses are not fetched."
  );
}

/**
 * Fetches one URL (R-T6): every connection goes to an address judged after DNS resolution (the
 * resolver the socket uses is the one that judges, so a name cannot resolve to a public address
 * for the check and a private one for the connection); same-host redirects are followed (each hop
 * judged again), a redirect to another host is returned, not followed; the body is cut at
 * maxBytes after decompression (a compression bomb stops there); the whole fetch times out.
 */
export async function safeFetch(raw: string, options: SafeFetchOptions = {}): Promise<SafeFetchResult> {
  const allow = options.allowPrivateHosts ?? [];
  const timeout = AbortSignal.timeout(options.timeoutMs ?? WEB_FETCH_TIMEOUT_MS);
  const signal = options.signal === undefined ? timeout : AbortSignal.any([timeout, options.signal]);
  let checked = checkUrl(raw, allow);
  for (let hop = 0; ; hop++) {
    if (typeof checked === "string") return { kind: "refused", reason: checked };
    const url = checked;
    const response = await open(url, allow, options.lookup ?? dnsLookup, signal);
    if (typeof response === "string") return { kind: "refused", reason: response };
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      response.destroy();
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return {
          kind: "refused",
          reason: `The server redirected to an invalid URL: ${location.slice(0, 200)}`,
        };
      }
      if (hostOf(next) !== hostOf(url)) {
        return { kind: "redirect", from: url.href, to: next.href, status };
      }
      if (hop >= WEB_FETCH_MAX_REDIRECTS) {
        return {
          kind: "refused",
          reason: `More than ${WEB_FETCH_MAX_REDIRECTS} redirects; stopped at ${url.href}.`,
        };
      }
      checked = checkUrl(next.href, allow);
      continue;
    }
    const maxBytes = options.maxBytes ?? WEB_FETCH_MAX_BYTES;
    const body = await readCapped(response, maxBytes, signal);
    if (typeof body === "string") return { kind: "refused", reason: body };
    return {
      kind: "page",
      url: url.href,
      status,
      statusText: response.statusMessage ?? "",
      contentType: String(response.headers["content-type"] ?? ""),
      body: body.bytes,
      truncated: body.truncated,
    };
  }
}

/** One request; the socket's resolver refuses private addresses (string: why it failed). */
function open(
  url: URL,
  allow: readonly string[],
  resolver: typeof dnsLookup,
  signal: AbortSignal,
): Promise<IncomingMessage | string> {
  const host = hostOf(url);
  const allowed = allow.includes(host);
  // Called by the socket for the name it connects to: the address judged is the address used.
  const lookup = (
    hostname: string,
    lookupOptions: { all?: boolean },
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ): void => {
    resolver(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, "", 0);
      const list = addresses as LookupAddress[];
      if (!allowed) {
        for (const entry of list) {
          const reason = privateAddressReason(entry.address);
          if (reason !== undefined) {
            const refusal: NodeJS.ErrnoException = new Error(privateRefusal(host, entry.address, reason));
            refusal.code = "EFORKLOOPPRIVATE";
            return callback(refusal, "", 0);
          }
        }
      }
      if (lookupOptions.all === true) return callback(null, list);
      const first = list[0];
      if (first === undefined)
        return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0);
      callback(null, first.address, first.family);
    });
  };
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolvePromise) => {
    const req = request(url, {
      method: "GET",
      headers: {
        "user-agent": "forkloop-webfetch/1 (+https://github.com/forkloop)",
        accept: "text/html,text/markdown,text/plain,application/json;q=0.9,*/*;q=0.5",
        "accept-encoding": "gzip, deflate, br",
      },
      lookup: lookup as never,
      signal,
    });
    req.once("response", resolvePromise);
    req.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EFORKLOOPPRIVATE") return resolvePromise(error.message);
      if (signal.aborted) {
        return resolvePromise(
          timedOut(signal) ? `WebFetch timed out fetching ${url.href}.` : "WebFetch was interrupted.",
        );
      }
      resolvePromise(`Could not fetch ${url.href}: ${error.code ?? error.message}`);
    });
    req.end();
  });
}

/** True when the signal's reason is the timeout's (not the caller's interrupt). */
function timedOut(signal: AbortSignal): boolean {
  return (signal.reason as Error | undefined)?.name === "TimeoutError";
}

/** The body, decompressed, cut at maxBytes (string: why it could not be read). */
function readCapped(
  response: IncomingMessage,
  maxBytes: number,
  signal: AbortSignal,
): Promise<{ bytes: Buffer; truncated: boolean } | string> {
  const encoding = String(response.headers["content-encoding"] ?? "identity").toLowerCase();
  let stream: Readable = response;
  if (encoding === "gzip" || encoding === "x-gzip") stream = response.pipe(createGunzip());
  else if (encoding === "deflate") stream = response.pipe(createInflate());
  else if (encoding === "br") stream = response.pipe(createBrotliDecompress());
  return new Promise((resolvePromise) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (value: { bytes: Buffer; truncated: boolean } | string) => {
      if (done) return;
      done = true;
      signal.removeEventListener("abort", onAbort);
      response.destroy();
      if (stream !== response) stream.destroy();
      resolvePromise(value);
    };
    const onAbort = () =>
      finish(timedOut(signal) ? "WebFetch timed out reading the page." : "WebFetch was interrupted.");
    signal.addEventListener("abort", onAbort, { once: true });
    stream.on("data", (chunk: Buffer) => {
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size = maxBytes;
        finish({ bytes: Buffer.concat(chunks), truncated: true });
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    stream.once("end", () => finish({ bytes: Buffer.concat(chunks), truncated: false }));
    stream.once("error", (error: Error) => finish(`Could not read the page: ${error.message}`));
  });
}
