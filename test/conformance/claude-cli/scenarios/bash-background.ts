import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a Bash call with run_in_background: true: the call's answer, the task messages, and the turn the shell's notification starts",
  args: [
    "-p",
    "Run the slow greeting in the background.",
    "--allowedTools",
    "Bash",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  script: {
    main: (request) =>
      request.lastUserText?.includes("task-notification")
        ? text("The greeting finished.")
        : byTurn(request, [
            toolCall("Bash", {
              // Long enough that on a loaded machine the shell still ends after the turn on both
              // sides: its task_updated/task_notification lines then follow the turn's result.
              command: "sleep 3; echo hello",
              description: "Print a greeting",
              run_in_background: true,
            }),
            text("It runs in the background."),
          ]),
  },
} satisfies CliScenario;
