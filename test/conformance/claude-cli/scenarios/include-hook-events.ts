import { byTurn, text, toolCall } from "../../support/script.js";
import { type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "--include-hook-events: every hook command's run as system/hook_started and hook_response lines, in order",
  args: ["-p", "Read notes.txt.", "--output-format", "stream-json", "--verbose", "--include-hook-events"],
  home: {
    ".claude/settings.json": hookLogSettings([
      "SessionStart",
      "UserPromptSubmit",
      "PreToolUse",
      "PostToolUse",
      "Stop",
      "SessionEnd",
    ]),
  },
  files: { "notes.txt": "hello\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
