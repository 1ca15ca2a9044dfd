import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a turn whose requests the API is overloaded for (529 overloaded_error), one retry allowed: the retry, the result, the text shown and StopFailure",
  "529",
  { streamJson: true, retries: 1 },
);
