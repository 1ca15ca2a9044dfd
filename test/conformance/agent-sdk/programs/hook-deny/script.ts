import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a PreToolUse hook denies Bash: the tool_result is an error and the denial is in permission_denials",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "ls", description: "List files" }),
        text("I may not run ls."),
      ]),
  },
} satisfies ProgramCase;
