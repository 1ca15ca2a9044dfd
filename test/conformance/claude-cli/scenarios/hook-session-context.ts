import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

// Each hook prints its context one way: JSON additionalContext, or plain stdout.
const json = (event: string, context: string) =>
  `cat > /dev/null; echo '${JSON.stringify({ hookSpecificOutput: { hookEventName: event, additionalContext: context } })}'`;
const plain = (context: string) => `cat > /dev/null; echo '${context}'`;

export const SESSION_START_SETTINGS = {
  hooks: {
    SessionStart: [
      { hooks: [{ type: "command", command: json("SessionStart", "START-JSON-CONTEXT") }] },
      { hooks: [{ type: "command", command: plain("START-PLAIN-CONTEXT") }] },
    ],
    UserPromptSubmit: [
      { hooks: [{ type: "command", command: json("UserPromptSubmit", "PROMPT-JSON-CONTEXT") }] },
      { hooks: [{ type: "command", command: plain("PROMPT-PLAIN-CONTEXT") }] },
    ],
  },
};

// Each in Claude Code's words: where each lands (a system message, the user turn) is compared.
export const LABELLED = [
  "SessionStart hook additional context: START-JSON-CONTEXT",
  "SessionStart:startup hook success: START-PLAIN-CONTEXT",
  "UserPromptSubmit hook additional context: PROMPT-JSON-CONTEXT",
  "UserPromptSubmit hook success: PROMPT-PLAIN-CONTEXT",
];

export default {
  what: "SessionStart and UserPromptSubmit hooks' context (JSON additionalContext and plain stdout) reaches the model where Claude Code puts it: a system message after the prompt",
  args: ["-p", "Say hello.", "--output-format", "json"],
  home: { ".claude/settings.json": JSON.stringify(SESSION_START_SETTINGS) },
  lastRequestTexts: LABELLED,
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
