import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "ANTHROPIC_AUTH_TOKEN alone in stream-json: the init line's apiKeySource",
  args: ["-p", "Say hello.", "--output-format", "stream-json", "--verbose"],
  env: { ANTHROPIC_API_KEY: null, ANTHROPIC_AUTH_TOKEN: "{apiKey}" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
