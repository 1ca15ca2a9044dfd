import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "default mode, no allow rule: a compound command of read-only parts (sleep, echo) runs without asking, on both sides",
  args: ["-p", "Print a greeting after a second.", "--output-format", "json"],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "sleep 1; echo hello", description: "Print a greeting" }),
        text("It printed hello."),
      ]),
  },
} satisfies CliScenario;
