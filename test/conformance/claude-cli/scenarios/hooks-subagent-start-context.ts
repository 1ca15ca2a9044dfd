import { agentCall, byTurn, text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Read notes.txt and report it.";
const CONTEXT = "SUBCTX: the notes are plain text.";
const PLAIN = "SUBOUT: plain stdout.";

export default {
  what: "a SubagentStart hook's additionalContext and another's plain stdout: where the sub-agent's request carries them, in which words",
  args: ["-p", "Have a helper read notes.txt.", "--output-format", "stream-json", "--verbose"],
  home: {
    ".claude/settings.json": JSON.stringify({
      hooks: {
        SubagentStart: [
          {
            hooks: [
              {
                type: "command",
                command: `cat > /dev/null; printf '{"hookSpecificOutput":{"hookEventName":"SubagentStart","additionalContext":"${CONTEXT}"}}'`,
              },
              { type: "command", command: `cat > /dev/null; echo '${PLAIN}'` },
            ],
          },
        ],
      },
    }),
  },
  files: { "notes.txt": "hello\n" },
  subAgentLastRequestTexts: [`SubagentStart hook additional context: ${CONTEXT}`, CONTEXT, PLAIN],
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Read notes", prompt: TASK }),
        text("notes.txt says hello."),
      ]),
    subAgent: () => text("It says hello."),
  },
} satisfies CliScenario;
