import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a turn the API refuses for a low credit balance (402): the result, the text shown and StopFailure (billing_error)",
  "402",
);
