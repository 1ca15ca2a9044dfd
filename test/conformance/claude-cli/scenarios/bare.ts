import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--bare: no CLAUDE.md discovery, no settings hooks",
  args: ["-p", "What is the codename?", "--bare", "--output-format", "json"],
  files: { "CLAUDE.md": "The codename is GREY-OWL-3.\n" },
  requestTexts: ["The codename is GREY-OWL-3."],
  script: { main: () => text("I do not know.") },
} satisfies CliScenario;
