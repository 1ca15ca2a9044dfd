import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "--include-partial-messages: the stream events of the reply between init and the assistant line",
  args: ["-p", "Say hello.", "--output-format", "stream-json", "--verbose", "--include-partial-messages"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
