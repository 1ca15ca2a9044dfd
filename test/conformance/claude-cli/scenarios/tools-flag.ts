import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--tools Read,Grep: only those built-in tools are offered",
  args: ["-p", "Say hello.", "--tools", "Read,Grep", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
