import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a 402 (credit balance too low) and a 403 (forbidden) from the API: each error's kind in the assistant message and StopFailure, and its text",
  script: {
    main: (request) => ({
      content: [],
      fault: (request.lastUserText ?? "").includes("credit") ? "402" : "403",
    }),
  },
} satisfies ProgramCase;
