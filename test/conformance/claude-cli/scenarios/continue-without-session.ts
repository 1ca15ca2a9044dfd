import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "-c where no session exists yet",
  args: ["-c", "-p", "Say hello.", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
