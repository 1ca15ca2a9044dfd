import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--permission-prompts none: a Write that would prompt is denied and listed in permission_denials",
  args: ["-p", "Create out.txt saying hi.", "--permission-prompts", "none", "--output-format", "json"],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write out.txt."),
      ]),
  },
} satisfies CliScenario;
