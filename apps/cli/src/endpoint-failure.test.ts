import { describe, expect, it } from "vitest";
import { describeEndpointFailure } from "./endpoint-failure.js";

const at = { url: "http://127.0.0.1:9", model: "claude-sonnet-4-6" };

describe("issue 13: endpoint failures stop a batch at its first item", () => {
  it("a connection error (a closed port, once its retries are spent) names the URL and the fix, and the batch can resume", () => {
    expect(describeEndpointFailure({ code: "connection_error", message: "Connection error." }, at)).toEqual({
      sentence:
        "cannot reach the model endpoint http://127.0.0.1:9 (Connection error.). Check that the server is up and ANTHROPIC_BASE_URL is right (unset it for the Anthropic API)",
      resumable: true,
    });
  });

  it("401, 403 and 404 name the key or the model; any other error is the item's own", () => {
    expect(describeEndpointFailure({ code: "http_401", message: "x" }, at)?.sentence).toContain(
      "ANTHROPIC_API_KEY",
    );
    expect(describeEndpointFailure({ code: "permission_error", message: "x" }, at)?.sentence).toContain(
      at.model,
    );
    expect(describeEndpointFailure({ code: "not_found_error", message: "x" }, at)?.resumable).toBe(false);
    expect(describeEndpointFailure({ code: "overloaded_error", message: "x" }, at)).toBeUndefined();
    expect(describeEndpointFailure({ code: "max_turns", message: "x" }, at)).toBeUndefined();
  });
});
