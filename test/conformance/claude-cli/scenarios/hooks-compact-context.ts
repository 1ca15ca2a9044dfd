import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const SUMMARY = "<summary>The user asked for a greeting; the assistant said hello.</summary>";
const CONTEXT = "CMPCTX: the greeting was the whole task.";
const PLAIN = "CMPOUT: plain stdout.";

export default {
  what: "SessionStart hooks matching `compact` (one answers additionalContext, one plain stdout): where the turn after a /compact carries their texts, in which words",
  before: [
    { args: ["-p", "Say hello.", "--output-format", "json"] },
    { args: ["-p", "/compact", "--resume", "{session}", "--output-format", "json"] },
  ],
  args: ["-p", "Say bye.", "--resume", "{session}", "--output-format", "json"],
  home: {
    ".claude/settings.json": JSON.stringify({
      hooks: {
        SessionStart: [
          {
            matcher: "compact",
            hooks: [
              {
                type: "command",
                command: `cat > /dev/null; printf '{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"${CONTEXT}"}}'`,
              },
              { type: "command", command: `cat > /dev/null; echo '${PLAIN}'` },
            ],
          },
        ],
      },
    }),
  },
  lastRequestTexts: [
    `SessionStart hook additional context: ${CONTEXT}`,
    `SessionStart:compact hook success: ${PLAIN}`,
    CONTEXT,
    PLAIN,
    SUMMARY,
  ],
  // Every reply is a summary, so the compaction's request (a main request on both sides) gets one.
  script: { main: () => text(SUMMARY), side: () => text(SUMMARY) },
} satisfies CliScenario;
