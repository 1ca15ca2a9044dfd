import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--session-id: the session gets the given id",
  args: [
    "-p",
    "Say hello.",
    "--session-id",
    "6f1c2a3b-4d5e-4f60-8a71-9b2c3d4e5f60",
    "--output-format",
    "json",
  ],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
