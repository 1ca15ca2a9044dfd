import { agentCall, byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

const TASK = "Read notes.txt and report it.";
const CONTEXT = "SUBCTX: the notes are plain text.";

export default {
  what: "a SubagentStart callback's additionalContext: where the sub-agent's requests carry it, in which words",
  files: { "notes.txt": "hello\n" },
  subAgentLastRequestTexts: [`SubagentStart hook additional context: ${CONTEXT}`, CONTEXT],
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Read notes", prompt: TASK }),
        text("notes.txt says hello."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies ProgramCase;
