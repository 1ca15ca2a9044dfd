import { text } from "../../support/script.js";
import { type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "--bare: no CLAUDE.md discovery, no settings hooks, the minimal tool set",
  args: ["-p", "What is the codename?", "--bare", "--output-format", "json"],
  files: { "CLAUDE.md": "The codename is GREY-OWL-3.\n" },
  home: { ".claude/settings.json": hookLogSettings(["SessionStart", "UserPromptSubmit", "Stop"]) },
  requestTexts: ["The codename is GREY-OWL-3."],
  script: { main: () => text("I do not know.") },
} satisfies CliScenario;
