import type { ModelInfo, RetryOptions } from "@forkloop/loop-core";
import {
  API_KEY_HELPER_TIMEOUT_MS,
  type ApiKeyHelper,
  ApiKeyHelperError,
  apiKeyFromHelper,
} from "@forkloop/orchestrator";
import type { ModelSpec } from "@forkloop/sim";
import { z } from "zod";
import { parseFaultsFlag } from "./fault-spec.js";
import { retryOptionsFromEnv } from "./model-retry.js";
import { loadModelsFile, toModelOverrides } from "./models-file.js";
import { OptionsError } from "./options-error.js";

/**
 * Request records the embedded simulator keeps (newest first out): it records every raw request
 * body, so a long batch would otherwise grow memory without bound. The CLI never reads them.
 */
export const EMBEDDED_SIM_RECORD_LIMIT = 100;

/** Where model requests go; workers get only this plain data and build their own SDK client. */
export interface ModelEndpoint {
  /** The API key, or with `auth: "bearer"` the bearer token. */
  readonly apiKey: string;
  /** R-X2: sent as `x-api-key` (default) or, for `ANTHROPIC_AUTH_TOKEN`, `Authorization: Bearer`. */
  readonly auth?: "x-api-key" | "bearer" | "both";
  readonly baseURL?: string;
  /** R-X3: betas every request asks for (`ANTHROPIC_BETAS`, `--betas`) beside forkloop's own. */
  readonly betas?: readonly string[];
  /** R-R1, R-R2: deadlines and retries of every model request (`FORKLOOP_*` variables). */
  readonly retry?: RetryOptions;
  /** R-X2: the settings' apiKeyHelper that printed `apiKey`, run again on a 401. */
  readonly keyHelper?: ApiKeyHelper;
}

export interface ModelSource {
  readonly endpoint: ModelEndpoint;
  /** True when replies come from the embedded simulator (announced on stderr, R: honesty). */
  readonly simulated: boolean;
  /** `FORKLOOP_MODELS`: the client's model info (context window, prices); empty when unset. */
  readonly modelOverrides: readonly ModelInfo[];
  close(): Promise<void>;
}

const envSchema = z.object({
  ANTHROPIC_API_KEY: z.string().optional(),
  ANTHROPIC_AUTH_TOKEN: z.string().optional(),
  ANTHROPIC_BETAS: z.string().optional(),
  ANTHROPIC_BASE_URL: z.url({ message: "must be a URL such as https://api.anthropic.com" }).optional(),
  FORKLOOP_SIM_LATENCY: z.enum(["none", "realistic"], { message: "must be none or realistic" }).optional(),
  FORKLOOP_SIM_FAULTS: z.string().optional(),
  FORKLOOP_MODELS: z.string().optional(),
  FORKLOOP_API_KEY_HELPER_KEY: z.string().optional(),
  FORKLOOP_API_KEY_HELPER: z.string().optional(),
  FORKLOOP_API_KEY_HELPER_CWD: z.string().optional(),
});

export const SIMULATOR_NOTICE =
  "forkloop: ANTHROPIC_API_KEY is not set, so replies come from the built-in simulator, not a real model. " +
  "Set ANTHROPIC_API_KEY (and optionally ANTHROPIC_BASE_URL) to use a real endpoint.";

/**
 * Model selection (SPEC §5): `ANTHROPIC_API_KEY`, else `ANTHROPIC_AUTH_TOKEN` (+ optional
 * `ANTHROPIC_BASE_URL`) → that endpoint; otherwise the simulator starts in-process on a free port and ONE stderr line says the
 * replies are simulated. `FORKLOOP_SIM_LATENCY` (default realistic) and `FORKLOOP_SIM_FAULTS`
 * tune the embedded simulator; `FORKLOOP_HEADERS_TIMEOUT_MS`, `FORKLOOP_STREAM_IDLE_TIMEOUT_MS` and
 * `FORKLOOP_MAX_RETRIES` set the endpoint's `retry` (R-R1). `FORKLOOP_MODELS` (a models file) sets the client's model info
 * and, for the embedded simulator, its registry too, so both agree on the context window.
 */
export async function resolveModelSource(
  env: NodeJS.ProcessEnv,
  notice: (line: string) => void,
  /** The project directory a relative `FORKLOOP_MODELS` is read from (default: the process's). */
  dir?: string,
): Promise<ModelSource> {
  const parsed = envSchema.safeParse(emptyToUndefined(env));
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new OptionsError(
      `environment variable ${String(issue?.path[0])}: ${issue?.message}. Fix or unset it.`,
    );
  }
  const vars = parsed.data;
  const retry = retryOptionsFromEnv(env);
  const withRetry = Object.keys(retry).length === 0 ? {} : { retry };
  // R-X3: as Claude Code reads it, a comma-separated list added to the betas of each request.
  const betas = splitBetas(vars.ANTHROPIC_BETAS);
  const withBetas = betas.length === 0 ? {} : { betas };
  const models: ModelSpec[] =
    vars.FORKLOOP_MODELS === undefined
      ? []
      : await loadModelsFile(vars.FORKLOOP_MODELS, "FORKLOOP_MODELS", dir);
  const modelOverrides = toModelOverrides(models);
  // R-X2: as in Claude Code, an API key (sent as x-api-key) wins over ANTHROPIC_AUTH_TOKEN, a
  // gateway's bearer token; either alone is an endpoint of its own.
  const credential =
    vars.ANTHROPIC_API_KEY !== undefined
      ? { apiKey: vars.ANTHROPIC_API_KEY }
      : vars.ANTHROPIC_AUTH_TOKEN !== undefined
        ? { apiKey: vars.ANTHROPIC_AUTH_TOKEN, auth: "bearer" as const }
        : vars.FORKLOOP_API_KEY_HELPER_KEY !== undefined
          ? {
              apiKey: vars.FORKLOOP_API_KEY_HELPER_KEY,
              auth: "both" as const,
              ...(vars.FORKLOOP_API_KEY_HELPER === undefined
                ? {}
                : {
                    keyHelper: keyHelperOf(
                      env,
                      vars.FORKLOOP_API_KEY_HELPER,
                      vars.FORKLOOP_API_KEY_HELPER_CWD ?? process.cwd(),
                    ),
                  }),
            }
          : undefined;
  if (credential !== undefined) {
    return {
      endpoint: {
        ...credential,
        ...(vars.ANTHROPIC_BASE_URL === undefined ? {} : { baseURL: vars.ANTHROPIC_BASE_URL }),
        ...withBetas,
        ...withRetry,
      },
      simulated: false,
      modelOverrides,
      close: async () => {},
    };
  }
  if (vars.ANTHROPIC_BASE_URL !== undefined) {
    throw new OptionsError(
      "ANTHROPIC_BASE_URL is set but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is. Set ANTHROPIC_API_KEY (any value for a local server), a gateway's ANTHROPIC_AUTH_TOKEN or an apiKeyHelper in your settings, or unset ANTHROPIC_BASE_URL to use the built-in simulator.",
    );
  }
  const faults =
    vars.FORKLOOP_SIM_FAULTS === undefined
      ? undefined
      : parseFaultsFlag(vars.FORKLOOP_SIM_FAULTS, "FORKLOOP_SIM_FAULTS");
  // R-V2: the simulator loads when it starts — a program with a key never loads it.
  const { startSimulator } = await import("@forkloop/sim");
  const simulator = await startSimulator({
    latency: vars.FORKLOOP_SIM_LATENCY ?? "realistic",
    recordLimit: EMBEDDED_SIM_RECORD_LIMIT,
    ...(models.length === 0 ? {} : { models }),
    ...(faults === undefined ? {} : { faults }),
  });
  notice(SIMULATOR_NOTICE);
  return {
    endpoint: { apiKey: "forkloop-simulator", baseURL: simulator.url, ...withBetas, ...withRetry },
    simulated: true,
    modelOverrides,
    close: () => simulator.close(),
  };
}

/** How long a helper's key is used before the next session runs the helper again (Claude Code's default: 5 min). */
const API_KEY_HELPER_TTL_MS = 5 * 60_000;

/**
 * R-X2, Claude Code's `apiKeyHelper` (settings: the user's files, `--settings`, a trusted
 * project's — never an untrusted one's, R-S5): with neither ANTHROPIC_API_KEY nor
 * ANTHROPIC_AUTH_TOKEN in `env`, the command runs in `/bin/sh` in `cwd` and the key it prints
 * becomes the run's FORKLOOP_API_KEY_HELPER_KEY, which `resolveModelSource` sends as `x-api-key`
 * and `Authorization: Bearer`, as Claude Code sends it, so the endpoint, the worker pool and the
 * shared runtime all use it (Bash and hooks never see it: FORKLOOP_*_KEY is left out, R-S4). Once per process: a later session
 * runs it again only after `CLAUDE_CODE_API_KEY_HELPER_TTL_MS` (default 5 minutes); a request
 * the API answers 401 runs it again and is retried once with the new key (the endpoint's
 * `keyHelper`). A helper that fails, prints nothing or runs past
 * `FORKLOOP_API_KEY_HELPER_TIMEOUT_MS` (default 60 s) stops the run before any request (an
 * OptionsError, exit 2) naming the command and its stderr or the limit.
 */
export async function withApiKeyHelper(
  env: Record<string, string | undefined>,
  helper: string | undefined,
  cwd: string,
): Promise<Record<string, string | undefined>> {
  const command = helper?.trim();
  if (command === undefined || command === "") return env;
  if (nonBlank(env.ANTHROPIC_API_KEY) || nonBlank(env.ANTHROPIC_AUTH_TOKEN)) return env;
  const ttlMs = millisecondsFrom(env.CLAUDE_CODE_API_KEY_HELPER_TTL_MS) ?? API_KEY_HELPER_TTL_MS;
  try {
    const key = await apiKeyFromHelper(keyHelperOf(env, command, cwd), ttlMs);
    return {
      ...env,
      FORKLOOP_API_KEY_HELPER_KEY: key,
      FORKLOOP_API_KEY_HELPER: command,
      FORKLOOP_API_KEY_HELPER_CWD: cwd,
    };
  } catch (error) {
    throw error instanceof ApiKeyHelperError ? new OptionsError(error.message) : error;
  }
}

/** The helper as the endpoint's clients run it again: in `cwd`, with the run's environment. */
function keyHelperOf(env: Record<string, string | undefined>, command: string, cwd: string): ApiKeyHelper {
  const {
    FORKLOOP_API_KEY_HELPER_KEY: _key,
    FORKLOOP_API_KEY_HELPER: _command,
    FORKLOOP_API_KEY_HELPER_CWD: _cwd,
    ...rest
  } = env;
  return {
    command,
    cwd,
    env: rest,
    timeoutMs: millisecondsFrom(env.FORKLOOP_API_KEY_HELPER_TIMEOUT_MS) ?? API_KEY_HELPER_TIMEOUT_MS,
  };
}

/** A whole number of milliseconds ≥ 0, or undefined when blank or not one. */
function millisecondsFrom(value: string | undefined): number | undefined {
  if (!nonBlank(value)) return undefined;
  const ms = Number(value);
  return Number.isFinite(ms) && ms >= 0 ? ms : undefined;
}

function nonBlank(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== "";
}

/**
 * R-X3: the betas Claude Code 2.1.332 takes from `--betas` (the Agent SDK's `SdkBeta`); it warns
 * about any other and leaves it out, and so does forkloop. `ANTHROPIC_BETAS` is not filtered.
 */
const USER_BETAS: readonly string[] = ["context-1m-2025-08-07"];

/** `betas` as Claude Code takes them: the ones it supports; each other one is a warning (its words). */
/** The beta the API's task budget (`output_config.task_budget`, `taskBudget`) is sent under. */
export const TASK_BUDGET_BETA = "task-budgets-2026-03-13";

export function supportedBetas(betas: readonly string[] | undefined, warn: (line: string) => void): string[] {
  const kept: string[] = [];
  for (const beta of betas ?? []) {
    if (USER_BETAS.includes(beta)) kept.push(beta);
    else
      warn(
        `Warning: Beta header '${beta}' is not allowed. Only the following betas are supported: ${USER_BETAS.join(", ")}`,
      );
  }
  return kept;
}

/**
 * R-X3: `query()`'s `betas` (the CLI's `--betas`) join `ANTHROPIC_BETAS`, the variable the
 * endpoint reads, so sessions asking for other betas get an endpoint (and pool) of their own.
 */
export function withBetasEnv(
  env: Record<string, string | undefined>,
  betas: readonly string[] | undefined,
): Record<string, string | undefined> {
  if (betas === undefined || betas.length === 0) return env;
  return { ...env, ANTHROPIC_BETAS: splitBetas([env.ANTHROPIC_BETAS ?? "", ...betas].join(",")).join(",") };
}

/** `a,b` (or `a, b`) → the betas, without blanks or repeats. */
function splitBetas(list: string | undefined): string[] {
  const betas = (list ?? "").split(",").map((beta) => beta.trim());
  return [...new Set(betas.filter((beta) => beta !== ""))];
}

function emptyToUndefined(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(env).map(([key, value]) => [key, value === "" ? undefined : value]),
  );
}
