import { text } from "../../support/script.js";
import { CLAUDE_CODE_HOOK_EVENTS, type CliScenario, hookLogSettings } from "../scenario.js";

const SUMMARY = "<summary>The user asked for a greeting; the assistant said hello.</summary>";

export default {
  what: "a hook for every event Claude Code knows and /compact on a resumed session of two turns: PreCompact, PostCompact and SessionStart (compact), with what input",
  before: [
    { args: ["-p", "Say hello.", "--output-format", "json"] },
    { args: ["-p", "Say it again.", "--resume", "{session}", "--output-format", "json"] },
  ],
  args: ["-p", "/compact", "--resume", "{session}", "--output-format", "json"],
  home: { ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS) },
  // Every reply is a summary, so the compaction's request (a main request on both sides) gets one.
  script: { main: () => text(SUMMARY), side: () => text(SUMMARY) },
} satisfies CliScenario;
