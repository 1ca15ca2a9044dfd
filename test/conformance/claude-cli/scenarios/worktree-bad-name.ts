import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/** A worktree name with a character Claude Code refuses: refused before any request, nothing made. */
export default {
  what: "--worktree with an invalid name: refused before any request, no worktree made",
  args: ["-p", "Say hello.", "--worktree", "bad name", "--output-format", "json"],
  git: true,
  files: { "README.md": "# demo\n" },
  script: { main: () => text("unused") },
} satisfies CliScenario;
