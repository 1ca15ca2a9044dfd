import { byTurn, text, toolCall } from "../../support/script.js";
import { type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "settings naming a hook event no release knows beside a real one: the run goes on and the real one fires",
  args: ["-p", "Read notes.txt.", "--output-format", "json"],
  home: { ".claude/settings.json": hookLogSettings(["PreToolUse", "PreToolUze"]) },
  files: { "notes.txt": "hello\n" },
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
