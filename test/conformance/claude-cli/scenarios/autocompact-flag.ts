import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--autocompact auto: read, and a one-shot run goes on as without it",
  args: ["-p", "Say hello.", "--autocompact", "auto", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
