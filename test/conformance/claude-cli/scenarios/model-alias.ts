import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--model sonnet: the alias resolves to the same model",
  args: ["-p", "Say hello.", "--model", "sonnet", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
