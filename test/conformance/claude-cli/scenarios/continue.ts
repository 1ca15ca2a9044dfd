import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "-c continues the directory's most recent session",
  before: [{ args: ["-p", "Remember the number 42.", "--output-format", "json"] }],
  args: ["-c", "-p", "What number?", "--output-format", "json"],
  script: { main: (request) => text((request.lastUserText ?? "").includes("What number") ? "42" : "Noted.") },
} satisfies CliScenario;
