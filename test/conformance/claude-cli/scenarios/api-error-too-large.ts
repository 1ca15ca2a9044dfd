import { apiErrorScenario, type CliScenario } from "../scenario.js";

const scenario = apiErrorScenario(
  "a turn the API refuses as too large (413 request_too_large), with stream-json output: the assistant line's error, the result, the text shown and StopFailure",
  "413",
);

export default {
  ...scenario,
  args: ["-p", "Say hello.", "--output-format", "stream-json", "--verbose"],
} satisfies CliScenario;
