import { RETRY_ENV } from "@forkloop/sdk";
import { z } from "zod";

/**
 * R-R2 + R-R11: the `--headers-timeout` / `--idle-timeout` / `--attempt-timeout` /
 * `--retry-max-wait` flags. They set the variables the SDK's
 * model endpoint reads (`FORKLOOP_HEADERS_TIMEOUT_MS`, `FORKLOOP_STREAM_IDLE_TIMEOUT_MS`), which
 * win over the environment, which wins over the settings files' `env` map.
 */
/** `--headers-timeout` / `--idle-timeout`: seconds (decimals allowed), 0 turns the deadline off. */
const secondsFlag = (flag: string, example: number) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, `must be a number of seconds, e.g. --${flag} ${example} (0 turns it off)`)
    .transform((text) => Math.round(Number(text) * 1000));

export const TIMEOUT_FLAG_OPTIONS = {
  "headers-timeout": { type: "string" },
  "idle-timeout": { type: "string" },
  "attempt-timeout": { type: "string" },
  "retry-max-wait": { type: "string" },
} as const;

/** The zod checks of the flags above, for `run` and `batch` alike. */
export const TIMEOUT_FLAG_SCHEMAS = {
  "headers-timeout": secondsFlag("headers-timeout", 120).optional(),
  "idle-timeout": secondsFlag("idle-timeout", 90).optional(),
  "attempt-timeout": secondsFlag("attempt-timeout", 600).optional(),
  "retry-max-wait": secondsFlag("retry-max-wait", 21600).optional(),
};

export const TIMEOUT_FLAGS_USAGE = `  --headers-timeout S     give up on a model request with no response headers after S seconds
                          and retry it (default 120; env FORKLOOP_HEADERS_TIMEOUT_MS)
  --idle-timeout S        give up on a model stream that sends nothing (pings aside) for S seconds
                          and retry it (default 90; env FORKLOOP_STREAM_IDLE_TIMEOUT_MS)
  --attempt-timeout S     give up on a model request still streaming after S seconds, however
                          often it sends, and retry it (default 600; env FORKLOOP_ATTEMPT_TIMEOUT_MS)
  --retry-max-wait S      a rate limit (429/529) that resets later than 32 s is waited out, in
                          one pause, up to S seconds in all; a later reset fails the request
                          (default 21600 = 6 h; env FORKLOOP_RETRY_MAX_WAIT_MS)`;

/** The deadline flags as the variables the SDK's model endpoint reads (flags win over the env). */
export function timeoutEnv(flags: {
  readonly "headers-timeout"?: number | undefined;
  readonly "idle-timeout"?: number | undefined;
  readonly "attempt-timeout"?: number | undefined;
  readonly "retry-max-wait"?: number | undefined;
}): Record<string, string> {
  return {
    ...(flags["attempt-timeout"] === undefined
      ? {}
      : { [RETRY_ENV.attemptTimeoutMs]: String(flags["attempt-timeout"]) }),
    ...(flags["retry-max-wait"] === undefined
      ? {}
      : { [RETRY_ENV.maxRateLimitWaitMs]: String(flags["retry-max-wait"]) }),
    ...(flags["headers-timeout"] === undefined
      ? {}
      : { [RETRY_ENV.headersTimeoutMs]: String(flags["headers-timeout"]) }),
    ...(flags["idle-timeout"] === undefined
      ? {}
      : { [RETRY_ENV.streamIdleTimeoutMs]: String(flags["idle-timeout"]) }),
  };
}
