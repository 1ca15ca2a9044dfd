import { text } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "a hook for every event Claude Code knows and a turn that ends on an API error (a model the API does not serve): StopFailure instead of Stop, with what input",
  args: ["-p", "Say hello.", "--model", "claude-sonnet-4-5", "--output-format", "json"],
  home: { ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS) },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
