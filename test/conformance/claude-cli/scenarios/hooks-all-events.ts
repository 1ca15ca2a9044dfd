import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

const TASK = "Read notes.txt and say what it holds.";

export default {
  what: "user settings with a hook for every event Claude Code knows: which fire, in which order, with what input",
  args: ["-p", "Read missing.txt, then ask a helper to read notes.txt.", "--output-format", "json"],
  home: { ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS) },
  files: { "notes.txt": "hello\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/missing.txt` }),
        agentCall({ description: "Read notes", prompt: TASK }),
        text("missing.txt does not exist; notes.txt says hello."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
