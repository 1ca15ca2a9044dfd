import { structuredAnswer } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const schema = { type: "object", properties: { verdict: { type: "string" } }, required: ["verdict"] };

export default {
  what: "--json-schema: structured_output in the json result",
  args: ["-p", "Is this ready to merge?", "--json-schema", JSON.stringify(schema), "--output-format", "json"],
  script: { main: (request) => structuredAnswer(request, { verdict: "ready" }) },
} satisfies CliScenario;
