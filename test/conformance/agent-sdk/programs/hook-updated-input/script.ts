import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a PreToolUse hook's updatedInput and additionalContext: the file lands where the hook says",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", {
          file_path: `${request.work}/haiku.txt`,
          content: "old pond\nfrog jumps in\nsplash\n",
        }),
        text("Written."),
      ]),
  },
} satisfies ProgramCase;
