import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "maxBudgetUsd below one request's cost: error_max_budget_usd after the first turn",
  files: { "notes.txt": "short\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It is short.")]),
  },
} satisfies ProgramCase;
