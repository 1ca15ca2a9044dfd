import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--prompt-suggestions in a one-shot stream-json run: Claude Code suggests nothing after a session's first turn, so no prompt_suggestion line and no extra request",
  args: ["-p", "Say hello.", "--prompt-suggestions", "--output-format", "stream-json", "--verbose"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
