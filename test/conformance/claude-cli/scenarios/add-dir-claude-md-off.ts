import type { CliScenario } from "../scenario.js";
import { addDirWithMemory } from "./add-dir-claude-md.js";

export default {
  ...addDirWithMemory,
  what: "--add-dir without CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD: the directory's CLAUDE.md is not read",
} satisfies CliScenario;
