import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a custom command's frontmatter: allowed-tools lets its Bash call run, $0/$1 take the words (counted from 0, as Claude Code 2.1.332 does), model picks the model",
  args: ["-p", "/tag notes.txt urgent", "--output-format", "stream-json", "--verbose"],
  // forkloop takes a project's allow rules (a command's allowed-tools too) only from a trusted project (R-S5).
  forkloopArgs: ["--trust-project"],
  files: {
    "notes.txt": "hello\n",
    ".claude/commands/tag.md":
      "---\ndescription: Tag a file\nallowed-tools: Bash(echo:*)\nmodel: sonnet\n---\nMark $0 as $1 by running `echo $1 $0` ($ARGUMENTS).\n",
  },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "echo urgent notes.txt", description: "Tag the file" }),
        text("Tagged notes.txt as urgent."),
      ]),
  },
} satisfies CliScenario;
