import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a background Bash command the model stops with TaskStop: its task's end as the stop reports it, and no notification turn",
  args: [
    "-p",
    "Start the long wait in the background, then stop it.",
    // Two values after one flag, as Claude Code's --allowedTools <tools...> takes them (R-X3).
    "--allowedTools",
    "Bash",
    "TaskStop",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  script: {
    main: (request) => {
      const started = request.lastToolResults
        .map((result) => /background with ID: (\w+)\./.exec(result.content)?.[1])
        .find((id) => id !== undefined);
      if (started !== undefined) return toolCall("TaskStop", { task_id: started });
      return byTurn(request, [
        toolCall("Bash", { command: "sleep 60", description: "Wait a minute", run_in_background: true }),
        text("Stopped."),
        text("Stopped."),
      ]);
    },
  },
} satisfies CliScenario;
