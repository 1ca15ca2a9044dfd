import { byTurn, text, toolCall } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "a hook for every event Claude Code knows and a Write a deny rule refuses: which events fire (PermissionDenied?), with what input",
  args: ["-p", "Create out.txt saying hi.", "--output-format", "json"],
  home: {
    ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS, { permissions: { deny: ["Write"] } }),
  },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCall("Write", { file_path: `${request.work}/out.txt`, content: "hi\n" }),
        text("I could not write out.txt."),
      ]),
  },
} satisfies CliScenario;
