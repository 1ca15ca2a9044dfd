import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--betas with two betas after one flag: the supported one (context-1m) reaches the request's anthropic-beta, the other is a warning and left out",
  args: [
    "-p",
    "Say hello.",
    "--betas",
    "context-1m-2025-08-07",
    "files-api-2025-04-14",
    "--output-format",
    "json",
  ],
  betas: ["context-1m-2025-08-07", "files-api-2025-04-14"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
