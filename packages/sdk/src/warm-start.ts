import { resolve } from "node:path";
import type { SDKMessage, SDKUserMessageInput } from "./messages.js";
import type { Options } from "./options.js";
import { OptionsError } from "./options-error.js";
import { type Query, query } from "./query.js";
import { queryRunEnvironment } from "./query-options.js";
import { processRuntimes, type RuntimeRegistry } from "./shared-runtime.js";

/**
 * The Agent SDK's `startup()` and `prewarm()` start a Claude Code process ahead of the first
 * prompt. forkloop has no process per session: what a first query would start — the endpoint
 * (the embedded simulator, when no key is set), the API client and the worker pool — is taken
 * here, and held until the query made from it ends (or `close()`), so that query starts warm.
 */
interface WarmParams {
  options?: Options;
  /** Accepted for the Agent SDK's signature; starting in-process has no process to wait for. */
  initializeTimeoutMs?: number;
  /** forkloop: the runtime registry (tests use their own); default: the process's. */
  runtimes?: RuntimeRegistry;
}

/** The Agent SDK's WarmQuery: one query, or `close()` to discard it. */
export interface WarmQuery extends AsyncDisposable {
  query(prompt: string | AsyncIterable<SDKUserMessageInput>): Query;
  close(): void;
}

/** What a spare session may be claimed with (the Agent SDK's ClaimOptions, as query options). */
export interface ClaimOptions {
  cwd: string;
  env?: Record<string, string>;
  additionalDirectories?: string[];
  model?: string;
  permissionMode?: NonNullable<Options["permissionMode"]>;
  maxThinkingTokens?: number | null;
  /** A settings overlay, as the `settings` query option (read last, trusted). */
  settings?: Record<string, unknown>;
}

/** The Agent SDK's SpareProcess: a warm start claimed once by a session. */
export interface SpareProcess extends AsyncDisposable {
  claim(params: { prompt: string | AsyncIterable<SDKUserMessageInput>; options: ClaimOptions }): Query;
  /** Settles with the session's directory and id once its query yields its first message. */
  readonly claimed: Promise<{ cwd: string; sessionId: string; parkedMs?: number; sdkMcpSettled: boolean }>;
  /** Settles when the claimed query ends, or the spare is closed. */
  readonly exited: Promise<void>;
  close(): void;
}

/**
 * The runtime a query with these options will use, held until `release()`: resolved as the query
 * resolves it (R-X2: the settings' apiKeyHelper and endpoint variables included), so the query
 * authenticates as a cold one would and finds this runtime warm. The query prints its own
 * warnings about the settings when it resolves them again.
 */
async function holdRuntime(params: WarmParams) {
  const options = params.options ?? {};
  const stderr = options.stderr ?? ((line: string) => process.stderr.write(line));
  const { cwd, run } = await queryRunEnvironment(options, () => {});
  await run.close();
  return (params.runtimes ?? processRuntimes).acquire(run.endpointEnv, (line) => stderr(`${line}\n`), cwd);
}

/**
 * A query that gives the warm runtime back when it ends, however it ends; `onMessage` sees each
 * message before the program does.
 */
function holdingQuery(run: Query, release: () => void, onMessage: (message: SDKMessage) => void): Query {
  const next = run.next.bind(run);
  const close = run.close.bind(run);
  return Object.assign(run, {
    async next() {
      try {
        const step = await next();
        if (step.done) release();
        else onMessage(step.value);
        return step;
      } catch (error) {
        release();
        throw error;
      }
    },
    close() {
      close();
      release();
    },
  });
}

function onlyOnce(what: string): () => void {
  let used = false;
  return () => {
    if (used) throw new OptionsError(`${what} can be used once: make another for the next query.`);
    used = true;
  };
}

/** The Agent SDK's `startup()`: the endpoint, client and worker pool started before the prompt. */
export async function startup(params: WarmParams = {}): Promise<WarmQuery> {
  const held = await holdRuntime(params);
  const release = () => void held.release();
  const use = onlyOnce("startup()'s WarmQuery");
  return {
    query(prompt) {
      use();
      const run = query({
        prompt,
        ...(params.options === undefined ? {} : { options: params.options }),
        ...(params.runtimes === undefined ? {} : { runtimes: params.runtimes }),
      });
      return holdingQuery(run, release, () => {});
    },
    close: release,
    async [Symbol.asyncDispose]() {
      release();
    },
  };
}

/** The Agent SDK's `prewarm()`: as `startup()`, claimed later with the session's own directory and settings. */
export async function prewarm(params: WarmParams = {}): Promise<SpareProcess> {
  const parkedAt = Date.now();
  const held = await holdRuntime(params);
  let exit: () => void = () => {};
  const exited = new Promise<void>((done) => {
    exit = done;
  });
  const release = () => {
    void held.release();
    exit();
  };
  let claim: { resolve: (value: Awaited<SpareProcess["claimed"]>) => void; reject: (error: Error) => void };
  const claimed = new Promise<Awaited<SpareProcess["claimed"]>>((resolve, reject) => {
    claim = { resolve, reject };
  });
  // A spare never claimed must not leave an unhandled rejection behind.
  claimed.catch(() => {});
  const use = onlyOnce("prewarm()'s SpareProcess");
  const spare: SpareProcess = {
    claimed,
    exited,
    claim({ prompt, options: claimOptions }) {
      use();
      const { maxThinkingTokens, settings, env, model, permissionMode, additionalDirectories } = claimOptions;
      const options: Options = {
        ...params.options,
        cwd: claimOptions.cwd,
        ...(model === undefined ? {} : { model }),
        ...(permissionMode === undefined ? {} : { permissionMode }),
        ...(additionalDirectories === undefined ? {} : { additionalDirectories }),
        ...(env === undefined ? {} : { env: { ...(params.options?.env ?? process.env), ...env } }),
        ...(maxThinkingTokens === undefined || maxThinkingTokens === null ? {} : { maxThinkingTokens }),
        ...(settings === undefined ? {} : { settings }),
      };
      const run = query({
        prompt,
        options,
        ...(params.runtimes === undefined ? {} : { runtimes: params.runtimes }),
      });
      const cwd = resolve(claimOptions.cwd);
      return holdingQuery(run, release, (message) => {
        if (message.session_id !== undefined) {
          claim.resolve({
            cwd,
            sessionId: message.session_id,
            parkedMs: Date.now() - parkedAt,
            sdkMcpSettled: true,
          });
        }
      });
    },
    close() {
      claim.reject(new Error("spare_closed: the spare was closed before it was claimed"));
      release();
    },
    async [Symbol.asyncDispose]() {
      spare.close();
    },
  };
  return spare;
}
