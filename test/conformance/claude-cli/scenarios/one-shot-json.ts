import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--output-format json: one result object",
  args: ["-p", "Say hello.", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
