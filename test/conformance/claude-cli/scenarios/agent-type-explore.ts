import { agentCall, byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Find where the greeting is defined.";

export default {
  what: "a sub-agent of Claude Code's built-in type Explore",
  args: [
    "-p",
    "Where is the greeting defined? Use an Explore agent.",
    "--output-format",
    "stream-json",
    "--verbose",
  ],
  files: { "src/greet.ts": 'export const greeting = "hi";\n' },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Find greeting", prompt: TASK, subagent_type: "Explore" }),
        text("It is in src/greet.ts."),
      ]),
    subAgent: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/src/greet.ts` }),
        text("src/greet.ts defines it."),
      ]),
  },
} satisfies CliScenario;
