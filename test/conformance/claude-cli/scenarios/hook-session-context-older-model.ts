import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";
import { LABELLED, SESSION_START_SETTINGS } from "./hook-session-context.js";

export default {
  what: "SessionStart and UserPromptSubmit hooks' context for a model without mid-conversation system messages (claude-sonnet-4-6) joins the user turn",
  args: ["-p", "Say hello.", "--model", "claude-sonnet-4-6", "--output-format", "json"],
  home: { ".claude/settings.json": JSON.stringify(SESSION_START_SETTINGS) },
  lastRequestTexts: LABELLED,
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
