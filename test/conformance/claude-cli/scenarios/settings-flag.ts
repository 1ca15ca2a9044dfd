import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--settings as JSON: its model and its allow rule apply",
  args: [
    "-p",
    "Create out.txt saying hi.",
    "--settings",
    '{"model":"claude-haiku-4-5","permissions":{"allow":["Write"]}}',
    "--output-format",
    "json",
  ],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("Created out.txt."),
      ]),
  },
} satisfies CliScenario;
