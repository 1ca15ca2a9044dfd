import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const OUTER = "Have your own helper count the words in notes.txt, then report.";
const INNER = "Count the words in notes.txt.";

export default {
  what: "a sub-agent's own Agent call with run_in_background: true (a nested background agent): whether it may start one, and how the sub-agent and its parent learn the nested report",
  args: ["-p", "Delegate the word count.", "--output-format", "stream-json", "--verbose"],
  files: { "notes.txt": "one two three\n" },
  script: {
    tasks: [OUTER, INNER],
    main: (request) =>
      byTurn(request, [agentCall({ description: "Delegate count", prompt: OUTER }), text("Delegated.")]),
    subAgent: (request) =>
      request.role.task === INNER
        ? byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("3 words.")])
        : byTurn(request, [
            toolCall("Agent", {
              description: "Count words",
              prompt: INNER,
              subagent_type: "general-purpose",
              run_in_background: true,
            }),
            text("My helper is counting."),
          ]),
  },
} satisfies CliScenario;
