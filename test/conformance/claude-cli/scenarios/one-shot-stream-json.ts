import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--output-format stream-json --verbose: init, the reply, the result",
  args: ["-p", "Say hello.", "--output-format", "stream-json", "--verbose"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
