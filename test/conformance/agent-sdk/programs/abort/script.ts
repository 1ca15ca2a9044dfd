import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "abortController.abort() during a tool call: a thrown AbortError or a result",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "sleep 20", description: "The long build" }),
        text("Stopped."),
      ]),
  },
} satisfies ProgramCase;
