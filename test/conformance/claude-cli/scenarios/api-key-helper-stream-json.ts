import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "apiKeyHelper in stream-json: the init line names where the key came from (apiKeySource)",
  args: ["-p", "Say hello.", "--output-format", "stream-json", "--verbose"],
  env: { ANTHROPIC_API_KEY: null },
  home: { ".claude/settings.json": JSON.stringify({ apiKeyHelper: "echo {apiKey}" }) },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
