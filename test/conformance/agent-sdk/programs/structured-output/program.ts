// Structured output, as in the Agent SDK's "Structured outputs" guide: a JSON schema in
// outputFormat, the parsed value in result.structured_output.
import { query } from "@anthropic-ai/claude-agent-sdk";

const schema = {
  type: "object",
  properties: { city: { type: "string" }, population: { type: "number" } },
  required: ["city", "population"],
  additionalProperties: false,
};

for await (const message of query({
  prompt: "Give me the largest city of Portugal and its population.",
  options: { outputFormat: { type: "json_schema", schema } },
})) {
  if (message.type === "result") {
    console.log(message.subtype);
    if (message.subtype === "success") console.log(JSON.stringify(message.structured_output));
  }
}
