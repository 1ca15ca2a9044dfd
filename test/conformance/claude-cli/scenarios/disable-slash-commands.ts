import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--disable-slash-commands: a prompt naming a project command is sent as written, not expanded",
  args: ["-p", "/greet Ada", "--disable-slash-commands", "--output-format", "json"],
  files: {
    ".claude/commands/greet.md":
      "---\ndescription: Greet someone\n---\nWrite a one-line greeting for $ARGUMENTS.\n",
  },
  requestTexts: ["/greet Ada", "Write a one-line greeting for Ada."],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
