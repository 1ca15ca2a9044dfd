import { RETRY_ENV } from "@forkloop/sdk";
import { z } from "zod";

/**
 * Issue 11: the `--headers-timeout` / `--idle-timeout` flags. They set the variables the SDK's
 * model endpoint reads (`FORKLOOP_HEADERS_TIMEOUT_MS`, `FORKLOOP_STREAM_IDLE_TIMEOUT_MS`), which
 * win over the environment, which wins over the settings files' `env` map.
 */
/** `--headers-timeout` / `--idle-timeout`: seconds (decimals allowed), 0 turns the deadline off. */
export const secondsFlag = (flag: string, example: number) =>
  z
    .string()
    .regex(/^\d+(\.\d+)?$/, `must be a number of seconds, e.g. --${flag} ${example} (0 turns it off)`)
    .transform((text) => Math.round(Number(text) * 1000));

export const TIMEOUT_FLAG_OPTIONS = {
  "headers-timeout": { type: "string" },
  "idle-timeout": { type: "string" },
} as const;

export const TIMEOUT_FLAGS_USAGE = `  --headers-timeout S     give up on a model request with no response headers after S seconds
                          and retry it (default 120; env FORKLOOP_HEADERS_TIMEOUT_MS)
  --idle-timeout S        give up on a model stream that sends nothing (pings aside) for S seconds
                          and retry it (default 90; env FORKLOOP_STREAM_IDLE_TIMEOUT_MS)`;

/** The deadline flags as the variables the SDK's model endpoint reads (flags win over the env). */
export function timeoutEnv(flags: {
  readonly "headers-timeout"?: number | undefined;
  readonly "idle-timeout"?: number | undefined;
}): Record<string, string> {
  return {
    ...(flags["headers-timeout"] === undefined
      ? {}
      : { [RETRY_ENV.headersTimeoutMs]: String(flags["headers-timeout"]) }),
    ...(flags["idle-timeout"] === undefined
      ? {}
      : { [RETRY_ENV.streamIdleTimeoutMs]: String(flags["idle-timeout"]) }),
  };
}
