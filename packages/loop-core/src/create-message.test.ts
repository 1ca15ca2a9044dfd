import { describe, expect, it } from "vitest";
import { apiErrorText } from "./create-message.js";

describe("apiErrorText: an API error in Claude Code 2.1.332's words (claude-cli scenarios api-error-*)", () => {
  it("R-X1: the status before the API's message; a low credit balance (402) and a forbidden key (403) as Claude Code says them", () => {
    expect(apiErrorText({ status: 400, message: "Invalid request" })).toBe("API Error: 400 Invalid request");
    expect(
      apiErrorText({ status: 402, message: "Your credit balance is too low to access the Anthropic API." }),
    ).toBe("Credit balance is too low");
    expect(apiErrorText({ status: 402, message: "Payment required" })).toBe(
      "API Error: 402 Payment required",
    );
    expect(
      apiErrorText({
        status: 403,
        message: "Your API key does not have permission to use the specified resource.",
      }),
    ).toBe(
      "Failed to authenticate. API Error: 403 Your API key does not have permission to use the specified resource.",
    );
    expect(apiErrorText({ status: null, message: "Connection error." })).toBe("API Error: Connection error.");
  });

  it("R-X1: a server error (5xx) and a rejected request (429) in Claude Code's words, naming where to look: the status page, or the gateway a base URL names (api-error-server, api-error-overloaded, api-error-rate-limit)", () => {
    expect(
      apiErrorText({ status: 500, message: "Internal server error" }, "m", "http://127.0.0.1:4000"),
    ).toBe(
      "API Error: 500 Internal server error. This is a server-side issue, usually temporary — try again in a moment. If it persists, check your inference gateway (127.0.0.1:4000).",
    );
    expect(apiErrorText({ status: 529, message: "Overloaded." }, "m", "https://api.anthropic.com")).toBe(
      "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment. If it persists, check https://status.claude.com.",
    );
    expect(apiErrorText({ status: 429, message: "Too many requests" })).toBe(
      "API Error: Request rejected (429) · Too many requests",
    );
    expect(apiErrorText({ status: 429, message: "" }, "m", "http://gw.internal:8080/v1")).toBe(
      "API Error: Request rejected (429) · this may be a temporary capacity issue. If it persists, check your inference gateway (gw.internal:8080).",
    );
  });

  it("R-X1: a request too large (413) in Claude Code's words, naming what fills a request (api-error-too-large)", () => {
    expect(
      apiErrorText({ status: 413, message: "Request exceeds the maximum allowed number of bytes." }),
    ).toBe(
      "Request too large (max 32MB). Accumulated images and attachments in the conversation pushed the request over the limit. Remove older images or compact the conversation.",
    );
  });
});
