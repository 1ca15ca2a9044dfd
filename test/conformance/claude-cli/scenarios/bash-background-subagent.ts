import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Start the greeting in the background.";

// A sub-agent's own background Bash: Claude Code prints task lines for it as for the main agent's.
export default {
  what: "a sub-agent's Bash call with run_in_background: true: the task lines printed for it",
  args: [
    "-p",
    "Ask a helper to start the greeting.",
    "--allowedTools",
    "Bash",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Start greeting", prompt: TASK }),
        text("The helper started it."),
      ]),
    subAgent: (request) =>
      byTurn(request, [
        toolCall("Bash", { command: "echo hello", description: "Print a greeting", run_in_background: true }),
        text("Started."),
      ]),
  },
} satisfies CliScenario;
