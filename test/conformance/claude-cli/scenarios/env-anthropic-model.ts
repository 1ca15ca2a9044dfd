import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "ANTHROPIC_MODEL picks the model when no flag does",
  args: ["-p", "Say hello.", "--output-format", "json"],
  env: { ANTHROPIC_MODEL: "claude-haiku-4-5" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
