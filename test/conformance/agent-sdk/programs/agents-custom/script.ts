import { agentCall, byTurn, text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

const TASK = "Check notes.txt for typos and list them.";
const PROMPT = "You are a meticulous proofreader. Report every typo you find, one per line.";

export default {
  what: "a custom agent with its own prompt and tools: what its conversation sees (system, tools, first message)",
  files: { "notes.txt": "Teh quick brown fox\n" },
  systemTexts: [PROMPT],
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Proofread notes", prompt: TASK, subagent_type: "reviewer" }),
        text("The reviewer found one typo: Teh."),
      ]),
    subAgent: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("Teh → The")]),
  },
} satisfies ProgramCase;
