import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/** An --add-dir directory with a CLAUDE.md, outside the project (under the run's home). */
export const addDirWithMemory = {
  args: ["-p", "What is the codename?", "--add-dir", "{home}/extra", "--output-format", "json"],
  home: { "extra/CLAUDE.md": "The codename is ADD-DIR-9.\n" },
  requestTexts: ["The codename is ADD-DIR-9."],
  script: { main: () => text("I do not know.") },
} satisfies Omit<CliScenario, "what">;

export default {
  ...addDirWithMemory,
  what: "--add-dir: the directory's CLAUDE.md is read only with CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1",
  env: { CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD: "1" },
} satisfies CliScenario;
