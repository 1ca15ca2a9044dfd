import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: '--tools "": no built-in tools are offered',
  args: ["-p", "Say hello.", "--tools", "", "--output-format", "text"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
