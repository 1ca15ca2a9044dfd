import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--allow-dangerously-skip-permissions alone: bypassing is allowed, not on, so a Write nobody allowed is still denied",
  args: [
    "-p",
    "Create out.txt saying hi.",
    "--allow-dangerously-skip-permissions",
    "--output-format",
    "json",
  ],
  // Claude Code refuses the flag to root unless IS_SANDBOX=1 (this CI runs as root): the flag's own effect is the subject.
  env: { IS_SANDBOX: "1" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write out.txt."),
      ]),
  },
} satisfies CliScenario;
