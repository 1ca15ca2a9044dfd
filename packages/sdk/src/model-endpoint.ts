import type { ModelInfo, RetryOptions } from "@forkloop/loop-core";
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
  readonly auth?: "x-api-key" | "bearer";
  readonly baseURL?: string;
  /** R-X3: betas every request asks for (`ANTHROPIC_BETAS`, `--betas`) beside forkloop's own. */
  readonly betas?: readonly string[];
  /** R-R1, R-R2: deadlines and retries of every model request (`FORKLOOP_*` variables). */
  readonly retry?: RetryOptions;
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
      "ANTHROPIC_BASE_URL is set but neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN is. Set ANTHROPIC_API_KEY (any value for a local server) or a gateway's ANTHROPIC_AUTH_TOKEN, or unset ANTHROPIC_BASE_URL to use the built-in simulator.",
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
