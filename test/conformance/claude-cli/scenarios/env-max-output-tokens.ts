import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "CLAUDE_CODE_MAX_OUTPUT_TOKENS caps max_tokens",
  args: ["-p", "Say hello.", "--output-format", "json"],
  env: { CLAUDE_CODE_MAX_OUTPUT_TOKENS: "4096" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
