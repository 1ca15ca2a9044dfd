import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a custom slash command from .claude/commands with $ARGUMENTS",
  args: ["-p", "/greet Ada", "--output-format", "json"],
  files: {
    ".claude/commands/greet.md":
      "---\ndescription: Greet someone\n---\nWrite a one-line greeting for $ARGUMENTS.\n",
  },
  script: { main: () => text("Hello, Ada!") },
} satisfies CliScenario;
