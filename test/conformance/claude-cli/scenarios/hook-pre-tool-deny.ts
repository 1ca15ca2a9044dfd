import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const settings = {
  permissions: { allow: ["Bash"] },
  hooks: {
    PreToolUse: [
      {
        matcher: "Bash",
        hooks: [{ type: "command", command: "cat > /dev/null; echo 'no shell here' >&2; exit 2" }],
      },
    ],
  },
};

export default {
  what: "a PreToolUse hook that exits 2 blocks the call; its stderr reaches the model",
  args: ["-p", "Run ls.", "--output-format", "stream-json", "--verbose"],
  home: { ".claude/settings.json": JSON.stringify(settings) },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "ls", description: "List files" }),
        text("The hook blocked it."),
      ]),
  },
} satisfies CliScenario;
