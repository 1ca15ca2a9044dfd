import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "apiKeyHelper in the user's settings, no key in the environment: the helper's output authenticates the requests",
  args: ["-p", "Say hello.", "--output-format", "json"],
  env: { ANTHROPIC_API_KEY: null },
  home: { ".claude/settings.json": JSON.stringify({ apiKeyHelper: "echo {apiKey}" }) },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
