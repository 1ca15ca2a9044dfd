import { spawn } from "node:child_process";
import type { Middleware } from "@anthropic-ai/sdk";
import { ForkloopError } from "@forkloop/loop-core";

/**
 * R-X2: Claude Code's `apiKeyHelper`, the command that prints the API key. It lives here, beside
 * the model client, because every client of a run — the main loop's and each worker's — asks it
 * again when the API answers 401 to the key it printed (`refreshOn401`).
 */
export interface ApiKeyHelper {
  readonly command: string;
  /** The directory it runs in (the run's cwd). */
  readonly cwd: string;
  /** The environment it runs with (the run's, settings' `env` included). */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How long it may run before it counts as hung (`FORKLOOP_API_KEY_HELPER_TIMEOUT_MS`). */
  readonly timeoutMs: number;
}

/** A helper that failed, printed no key or hung: the run stops naming it (bad input, exit 2). */
export class ApiKeyHelperError extends ForkloopError {
  override readonly name = "ApiKeyHelperError";

  constructor(message: string) {
    // A setting the user can fix, as the other bad-input errors (R-A7: one error family).
    super(message, { code: "invalid_options" });
  }
}

/** How long a helper may run by default before it counts as hung. */
export const API_KEY_HELPER_TIMEOUT_MS = 60_000;

/** Keys helpers printed, per command and directory, in this thread (each worker has its own). */
const helperKeys = new Map<string, { readonly key: Promise<string>; readonly at: number }>();

/**
 * The helper's key: the one it printed within `ttlMs`, else it runs again. A failed run is not
 * kept, so the next session asks again.
 */
export async function apiKeyFromHelper(helper: ApiKeyHelper, ttlMs: number): Promise<string> {
  const id = helperId(helper);
  const cached = helperKeys.get(id);
  const entry =
    cached !== undefined && Date.now() - cached.at < ttlMs
      ? cached
      : { key: runApiKeyHelper(helper), at: Date.now() };
  helperKeys.set(id, entry);
  try {
    return await entry.key;
  } catch (error) {
    if (helperKeys.get(id) === entry) helperKeys.delete(id);
    throw error;
  }
}

/**
 * The key to retry with after the API refused `refused` (a 401): the helper runs again, once for
 * all the requests refused with the same key at the same time.
 */
async function refreshedApiKey(helper: ApiKeyHelper, refused: string): Promise<string> {
  const id = helperId(helper);
  const cached = helperKeys.get(id);
  if (cached !== undefined) {
    const current = await cached.key.catch(() => undefined);
    if (current !== undefined && current !== refused) return current;
    if (helperKeys.get(id) !== cached) return refreshedApiKey(helper, refused);
  }
  return apiKeyFromHelper(helper, 0);
}

/**
 * R-X2: as Claude Code does, a request the API answers 401 is sent once more with the key the
 * helper prints when asked again; every later request carries the newest key. `auth` says which
 * headers carry it (a helper's key goes in both, as Claude Code sends it).
 */
export function refreshOn401(helper: ApiKeyHelper, firstKey: string, bearer: boolean): Middleware {
  let key = firstKey;
  const sign = (headers: Headers, value: string) => {
    headers.set("x-api-key", value);
    if (bearer) headers.set("authorization", `Bearer ${value}`);
  };
  return async (request, next) => {
    const headers = request.headers as Headers;
    const sent = key;
    sign(headers, sent);
    const response = await next(request);
    if (response.status !== 401) return response;
    const fresh = await refreshedApiKey(helper, sent);
    key = fresh;
    if (fresh === sent) return response;
    await response.body?.cancel();
    sign(headers, fresh);
    return next(request);
  };
}

function helperId(helper: ApiKeyHelper): string {
  return JSON.stringify([helper.command, helper.cwd]);
}

/** Runs the helper in `/bin/sh` (its own process group, so a hung one is killed whole). */
function runApiKeyHelper(helper: ApiKeyHelper): Promise<string> {
  const { command } = helper;
  return new Promise((resolvePromise, reject) => {
    const child = spawn("/bin/sh", ["-c", command], {
      cwd: helper.cwd,
      env: helper.env as NodeJS.ProcessEnv,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    let settled = false;
    const settle = (error: ApiKeyHelperError | undefined, key?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error === undefined) resolvePromise(key as string);
      else reject(error);
    };
    const timer = setTimeout(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      } catch {
        // Already gone.
      }
      settle(
        new ApiKeyHelperError(
          `apiKeyHelper "${command}" did not print a key within ${helper.timeoutMs} ms and was stopped (FORKLOOP_API_KEY_HELPER_TIMEOUT_MS sets the limit). Fix the helper in your settings, or set ANTHROPIC_API_KEY.`,
        ),
      );
    }, helper.timeoutMs);
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      if (stdout.length < 1024 * 1024) stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      if (stderr.length < 64 * 1024) stderr += chunk;
    });
    child.on("error", (error) =>
      settle(
        new ApiKeyHelperError(
          `apiKeyHelper "${command}" failed (${error.message}). Fix the helper in your settings, or set ANTHROPIC_API_KEY.`,
        ),
      ),
    );
    child.on("close", (code, signal) => {
      const said = stderr.trim();
      if (code !== 0) {
        const how = code === null ? `signal ${signal}` : `exit ${code}`;
        settle(
          new ApiKeyHelperError(
            `apiKeyHelper "${command}" failed (${how})${said === "" ? "" : `: ${said}`}. Fix the helper in your settings, or set ANTHROPIC_API_KEY.`,
          ),
        );
        return;
      }
      const key = stdout.trim();
      if (key === "" || !/^[\x21-\x7e]+$/.test(key)) {
        settle(
          new ApiKeyHelperError(
            `apiKeyHelper "${command}" ${key === "" ? "printed no key" : "printed more than a key"}${said === "" ? "" : ` (stderr: ${said})`}: the command must print only the API key on stdout.`,
          ),
        );
        return;
      }
      settle(undefined, key);
    });
  });
}
