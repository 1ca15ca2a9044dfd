import { agentCall, byTurn, text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const TASK = "Review the greeting for tone.";
const agents = {
  reviewer: { description: "Reviews text for tone", prompt: "You are a tone reviewer. Be brief." },
};

export default {
  what: "--agents defines a custom agent the model then calls",
  args: [
    "-p",
    "Have the reviewer check the greeting.",
    "--agents",
    JSON.stringify(agents),
    "--output-format",
    "json",
  ],
  systemTexts: ["You are a tone reviewer. Be brief."],
  script: {
    tasks: [TASK],
    main: (request) =>
      byTurn(request, [
        agentCall({ description: "Review tone", prompt: TASK, subagent_type: "reviewer" }),
        text("The reviewer says it is friendly."),
      ]),
    subAgent: () => text("Friendly."),
  },
} satisfies CliScenario;
