import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const CONTEXT = "EXPCTX: greetings are one line.";
const PLAIN = "EXPOUT: plain stdout.";

export default {
  what: "a UserPromptExpansion hook's additionalContext for a custom slash command: where the request carries it, with which words",
  args: ["-p", "/greet Ada", "--output-format", "json"],
  files: {
    ".claude/commands/greet.md":
      "---\ndescription: Greet someone\n---\nWrite a one-line greeting for $ARGUMENTS.\n",
  },
  home: {
    ".claude/settings.json": JSON.stringify({
      hooks: {
        UserPromptExpansion: [
          {
            hooks: [
              {
                type: "command",
                command: `cat > /dev/null; printf '{"hookSpecificOutput":{"hookEventName":"UserPromptExpansion","additionalContext":"${CONTEXT}"}}'`,
              },
              { type: "command", command: `cat > /dev/null; echo '${PLAIN}'` },
            ],
          },
        ],
      },
    }),
  },
  lastRequestTexts: [`UserPromptExpansion hook additional context: ${CONTEXT}`, CONTEXT, PLAIN],
  script: { main: () => text("Hello, Ada!") },
} satisfies CliScenario;
