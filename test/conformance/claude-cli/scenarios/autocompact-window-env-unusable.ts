import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "CLAUDE_CODE_AUTO_COMPACT_WINDOW that is no size: ignored, with a warning on stderr",
  args: ["-p", "Say hello."],
  env: { CLAUDE_CODE_AUTO_COMPACT_WINDOW: "a lot of tokens, more than any model's window" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
