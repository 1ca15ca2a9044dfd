import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--permission-mode manual: a write nobody allowed is denied in a headless run",
  args: ["-p", "Write out.txt.", "--permission-mode", "manual", "--output-format", "json"],
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write it."),
      ]),
  },
} satisfies CliScenario;
