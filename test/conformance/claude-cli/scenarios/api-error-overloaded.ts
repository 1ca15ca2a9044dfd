import { apiErrorScenario, type CliScenario } from "../scenario.js";

const scenario = apiErrorScenario(
  "a turn whose requests the API is overloaded (529 overloaded_error), one retry allowed by Claude Code's CLAUDE_CODE_MAX_RETRIES: the retry, the result, the text shown and StopFailure",
  "529",
);

export default {
  ...scenario,
  args: ["-p", "Say hello.", "--output-format", "stream-json", "--verbose"],
  env: { CLAUDE_CODE_MAX_RETRIES: "1" },
} satisfies CliScenario;
