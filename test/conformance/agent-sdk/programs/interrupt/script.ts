import { byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "interrupt() during a tool call: what the program receives after it, and how the query ends",
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "sleep 20", description: "The long build" }),
        text("Stopped."),
      ]),
  },
} satisfies ProgramCase;
