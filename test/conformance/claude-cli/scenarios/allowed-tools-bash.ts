import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--allowedTools with a Bash rule: the allowed command runs",
  args: [
    "-p",
    "Print hi with echo.",
    "--allowedTools",
    "Bash(echo:*)",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "echo hi", description: "Print hi" }),
        text("It printed hi."),
      ]),
  },
} satisfies CliScenario;
