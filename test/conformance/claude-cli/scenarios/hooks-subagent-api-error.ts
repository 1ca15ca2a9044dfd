import { agentCall, byTurn, text } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

const TASK = "Read notes.txt and report it.";

export default {
  what: "a hook for every event Claude Code knows and a sub-agent whose model request ends on an API error (400, not retried): which hooks fire for the sub-agent, with what input",
  args: ["-p", "Have a helper read notes.txt.", "--output-format", "stream-json", "--verbose"],
  home: { ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS) },
  files: { "notes.txt": "hello\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [agentCall({ description: "Read notes", prompt: TASK }), text("The helper failed.")]),
    subAgent: () => ({ content: [{ type: "text", text: "unused" }], fault: "400" }),
  },
} satisfies CliScenario;
