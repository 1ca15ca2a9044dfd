import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a module re-exporting every type the Agent SDK declares, and an exhaustive renderer of its message kinds (no query is made)",
  script: { main: () => text("unused") },
} satisfies ProgramCase;
