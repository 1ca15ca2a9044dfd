import type { RetryOptions } from "@forkloop/loop-core";
import { OptionsError } from "./options-error.js";

/**
 * R-R1, R-R2: the model client's deadlines and retry count, from the environment — the process's,
 * over the settings files' `env` map, so a project can set them once in `.forkloop/settings.json`
 * (`"env": {"FORKLOOP_STREAM_IDLE_TIMEOUT_MS": "30000"}`). The CLI's `--headers-timeout` and
 * `--idle-timeout` set the same variables.
 */
export const RETRY_ENV = {
  headersTimeoutMs: "FORKLOOP_HEADERS_TIMEOUT_MS",
  streamIdleTimeoutMs: "FORKLOOP_STREAM_IDLE_TIMEOUT_MS",
  maxRetries: "FORKLOOP_MAX_RETRIES",
  /** R-R11: an attempt's overall deadline (`--attempt-timeout`). */
  attemptTimeoutMs: "FORKLOOP_ATTEMPT_TIMEOUT_MS",
  /**
   * R-R11: the longest wait for a far rate-limit reset (`--retry-max-wait`); Claude Code's
   * equivalent is `CLAUDE_CODE_RETRY_WATCHDOG_MAX_WAIT_MS`.
   */
  maxRateLimitWaitMs: "FORKLOOP_RETRY_MAX_WAIT_MS",
} as const;

/**
 * Claude Code's names for the same settings, read when forkloop's own is not set, so an
 * environment made for `claude -p` keeps its meaning (R-X1).
 */
const CLAUDE_CODE_RETRY_ENV: Partial<Record<keyof typeof RETRY_ENV, string>> = {
  maxRetries: "CLAUDE_CODE_MAX_RETRIES",
};

export const RETRY_ENV_NAMES: readonly string[] = [
  ...Object.values(RETRY_ENV),
  ...Object.values(CLAUDE_CODE_RETRY_ENV),
];

/** The retry options the variables set (only those that are set; loop-core has the defaults). */
export function retryOptionsFromEnv(env: Readonly<Record<string, string | undefined>>): RetryOptions {
  const read = (key: keyof typeof RETRY_ENV): number | undefined => {
    const own = RETRY_ENV[key];
    const name = isSet(env[own]) ? own : (CLAUDE_CODE_RETRY_ENV[key] ?? own);
    const text = env[name];
    if (text === undefined || text === "") return undefined;
    if (!/^\d+$/.test(text.trim())) {
      throw new OptionsError(
        `environment variable ${name} is "${text}": it must be a whole number (milliseconds, or a count; 0 turns a deadline off). Fix or unset it.`,
      );
    }
    return Number(text.trim());
  };
  const headers = read("headersTimeoutMs");
  const idle = read("streamIdleTimeoutMs");
  const retries = read("maxRetries");
  const attempt = read("attemptTimeoutMs");
  const maxWait = read("maxRateLimitWaitMs");
  return {
    ...(attempt === undefined ? {} : { attemptTimeoutMs: attempt }),
    ...(maxWait === undefined ? {} : { maxRateLimitWaitMs: maxWait }),
    ...(headers === undefined ? {} : { headersTimeoutMs: headers }),
    ...(idle === undefined ? {} : { streamIdleTimeoutMs: idle }),
    ...(retries === undefined ? {} : { maxRetries: retries }),
  };
}

/** The environment with the settings' retry variables beneath it (the environment wins). */
export function withSettingsRetryEnv(
  env: Readonly<Record<string, string | undefined>>,
  settingsEnv: Readonly<Record<string, string>> | undefined,
): Record<string, string | undefined> {
  const fromSettings = Object.fromEntries(
    Object.entries(settingsEnv ?? {}).filter(([name]) => RETRY_ENV_NAMES.includes(name)),
  );
  const set = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ""),
  );
  return { ...env, ...fromSettings, ...set };
}

function isSet(value: string | undefined): value is string {
  return value !== undefined && value !== "";
}
