import { text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "the tools option: only the named built-in tools are offered (Agent and SendMessage too only when named)",
  files: { "notes.txt": "TODO: write tests\n" },
  script: { main: () => text("There is one TODO: write tests.") },
} satisfies ProgramCase;
