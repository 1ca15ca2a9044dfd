import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/** `-w` without a name: a made-up one (adjective-verb-animal), the worktree kept unchanged. */
export default {
  what: "-w without a name: a worktree with a made-up name, kept after the run",
  args: ["-p", "Say hello.", "--output-format", "json", "-w"],
  git: true,
  files: { "README.md": "# demo\n" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
