import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "two 529 overloaded errors, then an answer: api_retry messages and the result",
  script: () => {
    let overloaded = 0;
    return {
      main: () => (overloaded++ < 2 ? { content: [], fault: "529" } : text("Something, at last.")),
    };
  },
} satisfies ProgramCase;
