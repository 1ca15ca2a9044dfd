import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "ANTHROPIC_AUTH_TOKEN alone (a gateway's bearer token): it authenticates the requests",
  args: ["-p", "Say hello.", "--output-format", "json"],
  env: { ANTHROPIC_API_KEY: null, ANTHROPIC_AUTH_TOKEN: "{apiKey}" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
