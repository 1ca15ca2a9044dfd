import { describe, expect, it } from "vitest";
import type { SDKMessage, SDKResultMessage } from "./messages.js";
import {
  errorSentence,
  rateLimitPauseLine,
  resultText,
  runEndpointFailure,
  verboseLine,
  withoutWrittenAt,
} from "./run-result-text.js";

const context = {
  maxTurns: 2,
  maxBudgetUsd: undefined,
  resumeCommand: "forkloop run --resume s1",
  endpoint: { url: "https://api.anthropic.com", model: "claude-sonnet-4-6" },
};

/** A result with the fields the sentences read (the rest of a result does not matter to them). */
function result(fields: Record<string, unknown>): SDKResultMessage {
  return {
    type: "result",
    subtype: "success",
    num_turns: 1,
    result: "",
    ...fields,
  } as unknown as SDKResultMessage;
}

describe("what forkloop run says of a result (R-L6, R-R9, R-R11)", () => {
  it("a stopped run's sentence names how to go on, never a bare reason code", () => {
    expect(errorSentence(result({ terminal_reason: "max_turns" }), context)).toBe(
      'Error: Reached max turns (2). The session is saved: continue it with `forkloop run --resume s1 "…"`, or raise --max-turns.',
    );
    expect(errorSentence(result({ terminal_reason: "aborted_tools" }), context)).toBe(
      'Interrupted. The session is saved: continue it with `forkloop run --resume s1 "…"`.',
    );
    const busy = result({
      terminal_reason: "api_error",
      result: "API Error: 529 Overloaded",
      api_error_status: 529,
    });
    expect(errorSentence(busy, { ...context, apiErrorStatus: 529 })).toBe(
      "API Error: Overloaded — the endpoint stayed busy through every retry; try again later.",
    );
    // Claude Code's framing of a server error and a 429 gives way to the sentence's own fix.
    const server = result({
      terminal_reason: "api_error",
      result:
        "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:4000).",
      api_error_status: 529,
    });
    expect(errorSentence(server, { ...context, apiErrorStatus: 529 })).toBe(
      "API Error: Overloaded — the endpoint stayed busy through every retry; try again later.",
    );
    const limited = result({
      terminal_reason: "api_error",
      result:
        "API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit",
      api_error_status: 429,
    });
    expect(resultText(limited)).toBe("Number of request tokens has exceeded your per-minute rate limit");
  });

  it("R-R9: a refused key is bad input with its fix; a busy endpoint is not", () => {
    const refused = result({
      terminal_reason: "api_error",
      result: "API Error: 401 invalid x-api-key",
      api_error_status: 401,
    });
    expect(runEndpointFailure(refused, context.endpoint, 401)?.sentence).toBeTruthy();
    const busy = result({
      terminal_reason: "api_error",
      result: "API Error: 529 Overloaded",
      api_error_status: 529,
    });
    expect(runEndpointFailure(busy, context.endpoint, 529)).toBeUndefined();
  });

  it("R-R9, R-X1: a forbidden key's line (403) names the API's own words, not Claude Code's \"Failed to authenticate.\" before them", () => {
    const forbidden = result({
      terminal_reason: "api_error",
      result: "Failed to authenticate. API Error: 403 Your API key does not have permission.",
      api_error_status: 403,
    });
    expect(runEndpointFailure(forbidden, context.endpoint, 403)?.sentence).toBe(
      "https://api.anthropic.com does not let this API key use claude-sonnet-4-6 (403: Your API key does not have permission.). Use a key with access to it",
    );
  });

  it("the verbose and rate-limit lines; a message without one has none", () => {
    const retry = {
      type: "system",
      subtype: "api_retry",
      attempt: 1,
      max_retries: 10,
      retry_delay_ms: 500,
      error_message: "Overloaded",
    };
    expect(verboseLine(retry as unknown as SDKMessage)).toBe(
      "retrying (attempt 1/10) after 500 ms: Overloaded",
    );
    expect(rateLimitPauseLine(retry as unknown as SDKMessage)).toBeUndefined();
    const pause = { ...retry, error_status: 429, retry_delay_ms: 90_000, resumes_at: "2026-12-04T18:00:00Z" };
    expect(rateLimitPauseLine(pause as unknown as SDKMessage)).toBe(
      "rate limited (429: Overloaded): waiting until 2026-12-04T18:00:00Z (1m 30s), then the run goes on; --retry-max-wait caps such waits",
    );
    expect(verboseLine(pause as unknown as SDKMessage)).toBeUndefined();
    expect(withoutWrittenAt({ type: "result", written_at: "now" })).toEqual({ type: "result" });
  });
});
