import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "-n (the session's name): whether the output or the requests carry it",
  args: ["-p", "Say hello.", "-n", "nightly-review", "--output-format", "stream-json", "--verbose"],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
