import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "a one-shot prompt, text output: the answer on stdout, the request defaults",
  args: ["-p", "Say hello."],
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
