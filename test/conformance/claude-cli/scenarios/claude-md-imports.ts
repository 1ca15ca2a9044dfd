import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "CLAUDE.md with an @import: the imported file reaches the model",
  args: ["-p", "What is the project's codename?", "--output-format", "json"],
  files: {
    "CLAUDE.md": "# Project\nSee @docs/codename.md for the codename.\n",
    "docs/codename.md": "The codename is BLUE-HERON-7.\n",
  },
  requestTexts: ["The codename is BLUE-HERON-7."],
  script: { main: () => text("BLUE-HERON-7") },
} satisfies CliScenario;
