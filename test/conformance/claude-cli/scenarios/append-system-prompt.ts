import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--append-system-prompt adds to the default system prompt",
  args: ["-p", "Say hello.", "--append-system-prompt", "Always answer in French.", "--output-format", "json"],
  systemTexts: ["Always answer in French."],
  script: { main: () => text("Bonjour !") },
} satisfies CliScenario;
