import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Start the greeting in the background.";

// A sub-agent's own background Bash: Claude Code prints task lines for it as for the main agent's,
// owned by the sub-agent. The command outlives the sub-agent, so its end is always the stop at the
// sub-agent's final answer (a quick one races that answer).
export default {
  what: "a sub-agent's Bash call with run_in_background: true: the task lines printed for it, and its stop at the sub-agent's final answer",
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
        toolCall("Bash", { command: "sleep 30", description: "Wait a while", run_in_background: true }),
        text("Started."),
      ]),
  },
} satisfies CliScenario;
