import { type ApiError, invalidRequest } from "./api-error.js";
import type { PromptLayout } from "./prompt-layout.js";
import type { CacheControl } from "./request-schema.js";

export type Ttl = "5m" | "1h";

/** A position where the request asks for a cache entry (api doc §5). */
export interface Breakpoint {
  /** Index into the layout's positions. */
  position: number;
  ttl: Ttl;
}

const MAX_BREAKPOINTS = 4;

/**
 * The request's breakpoints: its explicit `cache_control` markers plus, with top-level
 * `cache_control` (automatic caching), the last cacheable block. Enforces the API's limits.
 */
export function findBreakpoints(
  layout: PromptLayout,
  automatic: CacheControl | null,
): { ok: true; breakpoints: Breakpoint[] } | { ok: false; error: ApiError } {
  const breakpoints: Breakpoint[] = [];
  layout.positions.forEach((p, i) => {
    if (p.cacheControl) breakpoints.push({ position: i, ttl: p.cacheControl.ttl ?? "5m" });
  });
  if (automatic) {
    const ttl = automatic.ttl ?? "5m";
    let last = layout.positions.length - 1;
    while (last >= 0 && !layout.positions[last]?.cacheable) last--;
    const existing = breakpoints.find((b) => b.position === last);
    if (existing && existing.ttl !== ttl) {
      return {
        ok: false,
        error: invalidRequest(
          `cache_control: automatic caching ttl '${ttl}' conflicts with the ttl '${existing.ttl}' of the explicit cache_control on the last cacheable block`,
        ),
      };
    }
    // A same-TTL explicit marker already there makes automatic caching a no-op.
    if (!existing && last >= 0) breakpoints.push({ position: last, ttl });
    else if (!existing) breakpoints.push({ position: -1, ttl });
  }
  const found = breakpoints.length + layout.positions.reduce((n, p) => n + p.extraMarkers, 0);
  if (found > MAX_BREAKPOINTS) {
    return {
      ok: false,
      error: invalidRequest(
        `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${found}.`,
      ),
    };
  }
  const real = breakpoints.filter((b) => b.position >= 0).sort((a, b) => a.position - b.position);
  // Longer-lived entries must precede shorter ones in prefix order.
  let seen5m = false;
  for (const b of real) {
    if (b.ttl === "5m") seen5m = true;
    else if (seen5m) {
      return {
        ok: false,
        error: invalidRequest(
          "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
        ),
      };
    }
  }
  return { ok: true, breakpoints: real };
}
