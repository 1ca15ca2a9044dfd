import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a turn the API refuses as forbidden (403): the result, the text shown and StopFailure (authentication_failed)",
  "403",
);
