import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a 400 from the API: no retry, the error in the messages and the result",
  script: { main: () => ({ content: [], fault: "400" }) },
} satisfies ProgramCase;
