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

  it("R-X1: a request too large (413) in Claude Code's words, naming what fills a request (api-error-too-large)", () => {
    expect(
      apiErrorText({ status: 413, message: "Request exceeds the maximum allowed number of bytes." }),
    ).toBe(
      "Request too large (max 32MB). Accumulated images and attachments in the conversation pushed the request over the limit. Remove older images or compact the conversation.",
    );
  });
});
