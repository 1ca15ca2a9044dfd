import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "the prompt on stdin, no argument",
  args: ["-p", "--output-format", "json"],
  stdin: "Say hello from stdin.",
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
