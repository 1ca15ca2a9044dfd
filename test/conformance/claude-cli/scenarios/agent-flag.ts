import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const AGENTS = JSON.stringify({
  reviewer: {
    description: "Reviews code",
    prompt: "You review code. CODEWORD-NINE.",
    tools: ["Read", "Grep"],
  },
});

export default {
  what: "--agent NAME: the main session runs as that agent type (its prompt, its tools)",
  args: ["-p", "Review notes.txt.", "--agents", AGENTS, "--agent", "reviewer", "--output-format", "json"],
  files: { "notes.txt": "hello\n" },
  systemTexts: ["CODEWORD-NINE"],
  script: { main: () => text("Looks fine.") },
} satisfies CliScenario;
