import { text } from "../../support/script.js";
import { type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "--safe-mode: no CLAUDE.md, settings hooks, skills, custom agents or commands",
  args: ["-p", "What is the codename?", "--safe-mode", "--output-format", "stream-json", "--verbose"],
  files: {
    "CLAUDE.md": "The codename is GREY-OWL-3.\n",
    ".claude/agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews code\n---\nYou review code.\n",
    ".claude/skills/greet/SKILL.md": "---\nname: greet\ndescription: Greets\n---\nSay hello.\n",
  },
  home: { ".claude/settings.json": hookLogSettings(["SessionStart", "UserPromptSubmit", "Stop"]) },
  requestTexts: ["The codename is GREY-OWL-3."],
  script: { main: () => text("I do not know.") },
} satisfies CliScenario;
