import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a reply that stops at max_tokens: the assistant message, stop_reason and the result",
  script: {
    main: () => ({
      content: [{ type: "text", text: "The essay begins, and then" }],
      stop_reason: "max_tokens",
    }),
  },
} satisfies ProgramCase;
