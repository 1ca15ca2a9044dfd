import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--system-prompt replaces the system prompt",
  args: [
    "-p",
    "Who are you?",
    "--system-prompt",
    "You are Zed, a terse assistant.",
    "--output-format",
    "json",
  ],
  systemTexts: ["You are Zed, a terse assistant."],
  script: { main: () => text("Zed.") },
} satisfies CliScenario;
