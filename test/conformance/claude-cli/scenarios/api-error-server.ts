import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a turn whose requests the API answers with 500 (api_error), one retry allowed: the retry, the result, the text shown and StopFailure",
  "500",
  { streamJson: true, retries: 1 },
);
