import { text } from "../../support/script.js";
import { type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "--restricted: no code-running tools or WebFetch, no settings files (their hooks), CLAUDE.md still read",
  args: ["-p", "What is the codename?", "--restricted", "--output-format", "stream-json", "--verbose"],
  files: { "CLAUDE.md": "The codename is GREY-OWL-3.\n" },
  home: { ".claude/settings.json": hookLogSettings(["SessionStart", "UserPromptSubmit", "Stop"]) },
  requestTexts: ["The codename is GREY-OWL-3."],
  script: { main: () => text("I do not know.") },
} satisfies CliScenario;
