import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a turn whose requests the API rate-limits (429 rate_limit_error), one retry allowed: the retry, the result, the text shown and StopFailure",
  "429",
  { streamJson: true, retries: 1 },
);
