import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/** `--worktree` outside a git repository: refused before any request. */
export default {
  what: "--worktree outside a git repository: refused before any request",
  args: ["-p", "Say hello.", "--worktree", "feature-x", "--output-format", "json"],
  files: { "README.md": "# demo\n" },
  script: { main: () => text("unused") },
} satisfies CliScenario;
