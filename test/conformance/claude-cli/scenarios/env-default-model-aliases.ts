import { agentCall, byTurn, text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Say what a haiku is.";

// Claude Code reads its family variables (ANTHROPIC_DEFAULT_{OPUS,SONNET,HAIKU}_MODEL) where an
// alias names a model: --model sonnet and an Agent call's model: "haiku".
export default {
  what: "ANTHROPIC_DEFAULT_SONNET_MODEL and ANTHROPIC_DEFAULT_HAIKU_MODEL: the model --model sonnet and a sub-agent's model: haiku send",
  args: ["-p", "Ask a quick helper.", "--model", "sonnet", "--output-format", "json"],
  env: {
    ANTHROPIC_DEFAULT_SONNET_MODEL: "claude-sonnet-4-6",
    ANTHROPIC_DEFAULT_HAIKU_MODEL: "claude-haiku-4-5-20251001",
  },
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Quick answer", prompt: TASK, model: "haiku" } as Parameters<
          typeof agentCall
        >[0]),
        text("A short poem."),
      ]),
    subAgent: () => text("A short poem."),
  },
} satisfies CliScenario;
