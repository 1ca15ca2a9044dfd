import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--no-session-persistence: the session cannot be resumed afterwards",
  before: [
    { args: ["-p", "Remember the colour teal.", "--no-session-persistence", "--output-format", "json"] },
  ],
  args: ["--resume", "{session}", "-p", "What colour?", "--output-format", "json"],
  script: { main: () => text("Noted.") },
} satisfies CliScenario;
