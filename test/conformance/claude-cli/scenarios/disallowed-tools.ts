import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--disallowedTools Bash: the tool is not offered",
  args: ["-p", "Say hello.", "--disallowedTools", "Bash", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
