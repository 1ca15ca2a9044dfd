import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--resume with --fork-session: a new session id with the old history",
  before: [{ args: ["-p", "Remember the colour teal.", "--output-format", "json"] }],
  args: ["--resume", "{session}", "--fork-session", "-p", "What colour?", "--output-format", "json"],
  script: {
    main: (request) => text((request.lastUserText ?? "").includes("What colour") ? "Teal." : "Noted."),
  },
} satisfies CliScenario;
