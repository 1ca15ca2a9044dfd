import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

// The user's settings pick a model and allow Write. --setting-sources project leaves them out:
// the request asks for the default model, and the Write nobody allowed is denied.
export default {
  what: "--setting-sources project: the user's settings (a model, an allow rule) are not read",
  args: ["-p", "Create out.txt saying hi.", "--setting-sources", "project", "--output-format", "json"],
  home: {
    ".claude/settings.json": JSON.stringify({ model: "claude-haiku-4-5", permissions: { allow: ["Write"] } }),
  },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not create out.txt."),
      ]),
  },
} satisfies CliScenario;
