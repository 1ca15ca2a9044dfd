import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a one-shot query: system/init, the assistant's text, the result",
  script: { main: () => text("The capital of France is Paris.") },
} satisfies ProgramCase;
