import type { CliScenario } from "../scenario.js";
import { addDirWithMemory } from "./add-dir-claude-md.js";

export default {
  ...addDirWithMemory,
  what: "--restricted --add-dir with CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1: which CLAUDE.md restricted mode reads",
  args: [...addDirWithMemory.args, "--restricted"],
  files: { "CLAUDE.md": "The project codename is GREY-OWL-3.\n" },
  requestTexts: [...addDirWithMemory.requestTexts, "The project codename is GREY-OWL-3."],
  env: { CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD: "1" },
} satisfies CliScenario;
