import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { defineTool, toolError } from "../tool-kit.js";
import type { SafeFetchOptions } from "../web/safe-fetch.js";

/** Characters of page text one result shows; `offset` reads on (Claude Code's paging). */
const WEB_FETCH_PAGE_CHARS = 100_000;
/** Claude Code caches a fetch for 15 minutes per URL. */
const CACHE_MS = 15 * 60_000;
const CACHE_ENTRIES = 32;

export interface WebFetchToolOptions {
  /**
   * Hosts that may be private or loopback addresses (exact names or IP literals) — for a test's
   * own server or a user's explicit choice; everything else private is refused (R-T6).
   */
  readonly allowPrivateHosts?: readonly string[];
  /** R-S6: with the sandbox on and its network off, WebFetch is refused like a sandboxed curl. */
  readonly networkOff?: boolean;
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  /** Test seam: the resolver. */
  readonly lookup?: SafeFetchOptions["lookup"];
}

interface CachedPage {
  readonly at: number;
  readonly header: string;
  readonly text: string;
}

/**
 * Claude Code's WebFetch (R-T6): fetches a URL (safeFetch: http(s) only, no private address
 * after DNS on any hop, cross-host redirects returned, 10 MiB, 60 s), turns HTML into Markdown
 * and shows it with the prompt, paged by `offset`. Claude Code then answers the prompt with a
 * small model; forkloop shows the page text itself (its tools have no model client), so the
 * agent's own model answers the prompt. The permission checker asks for it unless a
 * `WebFetch(domain:…)` rule allows the host.
 */
const webFetchInput = lazySchema(() =>
  z
    .object({
      url: z.string().url().describe("The URL to fetch content from"),
      prompt: z.string().describe("The prompt to run on the fetched content"),
      offset: z
        .number()
        .int()
        .min(0)
        .max(Number.MAX_SAFE_INTEGER)
        .optional()
        .describe(
          "Character position in the page text to start reading from. Use it to read on through a page too long for one call, with the value the previous result gave.",
        ),
    })
    .strict(),
);

export function createWebFetchTool(options: WebFetchToolOptions = {}) {
  const cache = new Map<string, CachedPage>();
  return defineTool({
    name: "WebFetch",
    description:
      "Fetches a URL, converts the page to markdown, and shows it with `prompt` so you can answer it.\n\n" +
      "- Fails on authenticated/private URLs — use an authenticated MCP tool or `gh` for those instead.\n" +
      "- Fails on localhost and other hostnames without a dot; for a local server, use curl via Bash.\n" +
      "- HTTP is upgraded to HTTPS. Cross-host redirects are returned to you rather than followed; call again with the redirect URL.\n" +
      "- Responses are cached for 15 minutes per URL.",
    inputSchema: webFetchInput,
    isConcurrencySafe: () => true,
    // It changes nothing here; what it may send out is the permission checker's question.
    isReadOnly: () => true,
    maxResultSizeChars: WEB_FETCH_PAGE_CHARS + 2_000,
    async call(input, context) {
      if (options.networkOff === true) {
        return toolError(
          "The sandbox is on with its network off, so WebFetch does not reach the network. Turn the sandbox's network on to fetch pages.",
        );
      }
      const now = Date.now();
      let page = cache.get(input.url);
      if (page === undefined || now - page.at > CACHE_MS) {
        // The fetching and page-to-text modules load at the first fetch (R-V2: not with the SDK).
        const [{ safeFetch }, { pageText }] = await Promise.all([
          import("../web/safe-fetch.js"),
          import("../web/page-text.js"),
        ]);
        const fetched = await safeFetch(input.url, {
          signal: context.abortController.signal,
          ...(options.allowPrivateHosts === undefined
            ? {}
            : { allowPrivateHosts: options.allowPrivateHosts }),
          ...(options.maxBytes === undefined ? {} : { maxBytes: options.maxBytes }),
          ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
          ...(options.lookup === undefined ? {} : { lookup: options.lookup }),
        });
        if (fetched.kind === "refused") return toolError(fetched.reason);
        if (fetched.kind === "redirect") {
          return {
            content:
              "REDIRECT DETECTED: The URL redirects to a different host.\n\n" +
              `Original URL: ${fetched.from}\nRedirect URL: ${fetched.to}\nStatus: ${fetched.status}\n\n` +
              "To complete your request, fetch the redirected URL with WebFetch again:\n" +
              `- url: ${JSON.stringify(fetched.to)}\n- prompt: ${JSON.stringify(input.prompt)}`,
          };
        }
        const text = pageText(fetched.body, fetched.contentType);
        if ("refused" in text) return toolError(text.refused);
        const cut = fetched.truncated
          ? ` (cut at ${fetched.body.length} bytes: the page is larger than WebFetch reads)`
          : "";
        const header = `URL: ${fetched.url}\nStatus: ${fetched.status} ${fetched.statusText}\nContent-Type: ${fetched.contentType || "(none)"}${cut}`;
        page = { at: now, header, text: text.text };
        cache.set(input.url, page);
        while (cache.size > CACHE_ENTRIES) cache.delete(cache.keys().next().value as string);
      }
      const offset = input.offset ?? 0;
      if (offset > 0 && offset >= page.text.length) {
        return toolError(
          `offset ${offset} is past the end of the page text (${page.text.length} characters).`,
        );
      }
      const end = Math.min(page.text.length, offset + WEB_FETCH_PAGE_CHARS);
      const more =
        end < page.text.length
          ? `\n\n[Showing characters ${offset}-${end} of ${page.text.length}. Use offset=${end} to read on.]`
          : offset > 0
            ? `\n\n[Showing characters ${offset}-${end} of ${page.text.length}.]`
            : "";
      return {
        content: `${page.header}\nPrompt: ${input.prompt}\n\n${page.text.slice(offset, end)}${more}`,
      };
    },
  });
}
