import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/**
 * `--worktree NAME` in a git repository: the session works in `.claude/worktrees/NAME` on a new
 * branch `worktree-NAME` (its working directory in the system prompt), the model's Write lands
 * there, and the worktree is kept after the run.
 */
export default {
  what: "--worktree NAME: the session runs in .claude/worktrees/NAME on branch worktree-NAME, which is kept",
  args: [
    "-p",
    "Create notes.txt saying hi.",
    "--worktree",
    "feature-x",
    "--permission-mode",
    "acceptEdits",
    "--output-format",
    "json",
  ],
  git: true,
  files: { "README.md": "# demo\n" },
  requestTexts: [".claude/worktrees/feature-x", "This is a git worktree"],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", {
          file_path: `${request.work}/.claude/worktrees/feature-x/notes.txt`,
          content: "hi\n",
        }),
        text("Done."),
      ]),
  },
} satisfies CliScenario;
