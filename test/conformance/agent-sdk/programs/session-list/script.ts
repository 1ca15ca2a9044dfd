import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "listSessions and getSessionMessages after a query",
  script: { main: () => text("Hi, session list!") },
} satisfies ProgramCase;
