import { apiErrorScenario } from "../scenario.js";

export default apiErrorScenario(
  "a hook for every event Claude Code knows and a turn that ends on an API error the API calls an invalid request (400): StopFailure's error kind (unknown) and input",
  "400",
);
