import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const CONTEXT = "The release codename is ORANGE-KITE-4.";
const output = JSON.stringify({
  hookSpecificOutput: { hookEventName: "PostToolBatch", additionalContext: CONTEXT },
});

const settings = {
  hooks: {
    PostToolBatch: [{ hooks: [{ type: "command", command: `cat > /dev/null; echo '${output}'` }] }],
  },
};

export default {
  what: "a PostToolBatch hook's additionalContext reaches the model before its next request",
  args: ["-p", "Read notes.txt.", "--output-format", "json"],
  lastRequestTexts: [CONTEXT],
  files: { "notes.txt": "hello\n" },
  home: { ".claude/settings.json": JSON.stringify(settings) },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
