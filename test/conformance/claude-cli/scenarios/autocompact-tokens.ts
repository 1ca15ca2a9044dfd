import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--autocompact with a window in tokens (at least 100k)",
  args: ["-p", "Say hello.", "--autocompact", "150000", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
