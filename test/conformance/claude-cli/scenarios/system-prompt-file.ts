import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--system-prompt-file and --append-system-prompt-file read the prompts from files",
  args: [
    "-p",
    "Who are you?",
    "--system-prompt-file",
    "system.txt",
    "--append-system-prompt-file",
    "extra.txt",
    "--output-format",
    "json",
  ],
  files: { "system.txt": "You are Quill, a careful editor.\n", "extra.txt": "Always answer in one word.\n" },
  systemTexts: ["You are Quill, a careful editor.", "Always answer in one word."],
  script: { main: () => text("Quill.") },
} satisfies CliScenario;
