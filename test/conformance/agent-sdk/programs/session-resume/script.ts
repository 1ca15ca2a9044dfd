import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "resume: the second query continues the first one's session (same id, its history sent)",
  script: {
    main: (request) =>
      request.lastUserText?.includes("Which word")
        ? text(request.body.messages.length > 1 ? "You asked me to remember mango." : "I have no history.")
        : text("Remembered: mango."),
  },
} satisfies ProgramCase;
