import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--effort high: the request's effort",
  args: ["-p", "Say hello.", "--effort", "high", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
