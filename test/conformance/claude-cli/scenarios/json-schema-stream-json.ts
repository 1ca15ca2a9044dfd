import { structuredAnswer } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const schema = {
  type: "object",
  properties: { files: { type: "integer" }, ok: { type: "boolean" } },
  required: ["files", "ok"],
};

export default {
  what: "--json-schema with stream-json: the result line's structured_output",
  args: [
    "-p",
    "Count the files.",
    "--json-schema",
    JSON.stringify(schema),
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  script: { main: (request) => structuredAnswer(request, { files: 3, ok: true }) },
} satisfies CliScenario;
