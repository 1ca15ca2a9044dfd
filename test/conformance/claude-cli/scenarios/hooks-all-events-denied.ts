import { byTurn, text, toolCall } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "a hook for every event Claude Code knows, an --add-dir directory and a Write nobody allowed (denied in default mode): which events fire, with what input",
  args: ["-p", "Create out.txt saying hi.", "--add-dir", "{home}/extra", "--output-format", "json"],
  home: {
    ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS),
    "extra/readme.txt": "extra\n",
  },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write out.txt."),
      ]),
  },
} satisfies CliScenario;
