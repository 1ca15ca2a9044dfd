import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a module re-exporting every value the Agent SDK exports (no query is made)",
  script: { main: () => text("unused") },
} satisfies ProgramCase;
