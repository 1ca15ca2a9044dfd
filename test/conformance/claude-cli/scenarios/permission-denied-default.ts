import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "default mode: a Write nobody allowed is denied and listed in permission_denials",
  args: ["-p", "Create out.txt saying hi.", "--output-format", "json"],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write out.txt."),
      ]),
  },
} satisfies CliScenario;
