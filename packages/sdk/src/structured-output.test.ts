import { describe, expect, it } from "vitest";
import type { SDKResultMessage } from "./messages.js";
import { withStructuredOutput } from "./structured-output.js";

const format = { type: "json_schema" as const, schema: { type: "object" } };

function success(text: string): SDKResultMessage {
  return {
    type: "result",
    subtype: "success",
    is_error: false,
    result: text,
  } as unknown as SDKResultMessage;
}

describe("R-K1: outputFormat's result", () => {
  it("a JSON final reply becomes structured_output; without outputFormat the result is unchanged", () => {
    expect(withStructuredOutput(success('{"a":1}'), format)).toMatchObject({ structured_output: { a: 1 } });
    expect(withStructuredOutput(success('{"a":1}'), undefined)).not.toHaveProperty("structured_output");
  });

  it("a reply that is not JSON is the Agent SDK's error_max_structured_output_retries, naming what came back", () => {
    const result = withStructuredOutput(success("Sure! Here it is"), format);
    expect(result).toMatchObject({ subtype: "error_max_structured_output_retries", is_error: true });
    expect(result).toMatchObject({ errors: [expect.stringContaining('"Sure! Here it is"')] });
  });
});
