import { describe, expect, it } from "vitest";
import { describeEndpointFailure } from "./endpoint-failure.js";

const at = { url: "http://127.0.0.1:9", model: "claude-sonnet-4-6" };

describe("R-R9: endpoint failures stop a batch at its first item", () => {
  it("a connection error (a closed port, once its retries are spent) names the URL and the fix, and the batch can resume", () => {
    expect(describeEndpointFailure({ code: "connection_error", message: "Connection error." }, at)).toEqual({
      sentence:
        "cannot reach the model endpoint http://127.0.0.1:9 (Connection error.). Check that the server is up and ANTHROPIC_BASE_URL is right (unset it for the Anthropic API)",
      resumeWith: "",
    });
  });

  it("401, 403 and 404 name the key or the model; any other error is the item's own", () => {
    expect(describeEndpointFailure({ code: "http_401", message: "x" }, at)?.sentence).toContain(
      "ANTHROPIC_API_KEY",
    );
    expect(describeEndpointFailure({ code: "permission_error", message: "x" }, at)?.sentence).toContain(
      at.model,
    );
    expect(
      describeEndpointFailure({ code: "not_found_error", message: "model: claude-nope" }, at),
    ).toMatchObject({
      sentence: expect.stringContaining('model "claude-sonnet-4-6" was not found'),
      resumeWith: " --model NAME",
    });
    expect(describeEndpointFailure({ code: "overloaded_error", message: "x" }, at)).toBeUndefined();
    expect(describeEndpointFailure({ code: "max_turns", message: "x" }, at)).toBeUndefined();
  });

  it("R-R9: a wrong endpoint — a 200 that is no event stream, a 404 from a web server — names the URL and ANTHROPIC_BASE_URL", () => {
    for (const message of [
      'the endpoint answered 200 with text/html (an HTML page titled "Sign in") instead of an event stream',
      'the endpoint answered 404 to POST /v1/messages (an HTML page titled "404 Not Found")',
    ]) {
      expect(describeEndpointFailure({ code: "wrong_endpoint", message }, at)).toEqual({
        sentence: `http://127.0.0.1:9 is not an Anthropic Messages API endpoint: ${message}. Check ANTHROPIC_BASE_URL (the API's root, e.g. https://api.anthropic.com, without /v1; a proxy may want you to log in first), or unset it for the Anthropic API`,
        resumeWith: "",
      });
    }
  });
});
