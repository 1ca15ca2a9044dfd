import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import { type CliScenario, hookLogSettings } from "../scenario.js";

const TASK = "Read notes.txt and report it.";

export default {
  what: "settings hooks for a failed call, a sub-agent's start and the session's end, with stream-json output",
  args: [
    "-p",
    "Read gone.txt, then have a helper read notes.txt.",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  home: {
    ".claude/settings.json": hookLogSettings(["PostToolUseFailure", "SubagentStart", "SessionEnd"]),
  },
  files: { "notes.txt": "hello\n" },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/gone.txt` }),
        agentCall({ description: "Read notes", prompt: TASK }),
        text("gone.txt is missing; notes.txt says hello."),
      ]),
    subAgent: () => text("It says hello."),
  },
} satisfies CliScenario;
