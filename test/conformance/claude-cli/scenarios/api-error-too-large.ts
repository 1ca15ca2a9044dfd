import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a turn the API refuses as too large (413 request_too_large), with stream-json output: the assistant line's error, the result, the text shown and StopFailure",
  "413",
  { streamJson: true },
);
