import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a model the API does not serve (404): the error result, stdout and the exit code",
  args: ["-p", "Say hello.", "--model", "claude-sonnet-4-5", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
