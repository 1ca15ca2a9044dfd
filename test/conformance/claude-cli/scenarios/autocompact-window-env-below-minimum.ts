import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "CLAUDE_CODE_AUTO_COMPACT_WINDOW under 100k: read as the 100k minimum, with a warning on stderr",
  args: ["-p", "Say hello."],
  env: { CLAUDE_CODE_AUTO_COMPACT_WINDOW: "50k" },
  script: { main: () => text("Hello!") },
} satisfies CliScenario;
