import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "streaming input: two user turns in one session, each with its own result",
  script: {
    main: (request) =>
      request.lastUserText?.includes("Which number")
        ? text("You asked me to remember 42.")
        : text("Noted: 42."),
  },
} satisfies ProgramCase;
