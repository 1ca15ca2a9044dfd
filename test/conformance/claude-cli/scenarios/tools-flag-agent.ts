import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--tools Read,Agent: Agent and Read are offered, SendMessage is not (it must be named too)",
  args: ["-p", "Say hello.", "--tools", "Read,Agent", "--output-format", "json"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
