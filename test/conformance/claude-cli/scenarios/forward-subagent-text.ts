import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";
import generalPurpose from "./agent-general-purpose.js";

// agent-general-purpose's run with the flag, its sub-agent saying something as it calls Read.
export default {
  ...generalPurpose,
  what: "--forward-subagent-text: a sub-agent's text blocks too, as assistant lines with parent_tool_use_id",
  args: [...generalPurpose.args, "--forward-subagent-text"],
  script: {
    ...generalPurpose.script,
    subAgent: (request) =>
      byTurn(request, [
        toolCall("Read", { file_path: `${request.work}/notes.txt` }, "Reading the notes."),
        text("first line"),
      ]),
  },
} satisfies CliScenario;
