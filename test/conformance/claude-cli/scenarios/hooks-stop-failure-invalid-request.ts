import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

export default {
  what: "a hook for every event Claude Code knows and a turn that ends on an API error the API calls an invalid request (400): StopFailure's error kind and input",
  args: ["-p", "Say hello.", "--output-format", "json"],
  home: { ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS) },
  script: { main: () => ({ content: [{ type: "text", text: "x" }], fault: "400" }) },
} satisfies CliScenario;
