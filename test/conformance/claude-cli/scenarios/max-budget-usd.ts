import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--max-budget-usd below one turn's cost: the error_max_budget_usd result and the exit code",
  args: ["-p", "Read notes.txt.", "--max-budget-usd", "0.000001", "--output-format", "json"],
  files: { "notes.txt": "hello\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
