import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

// The default model is overloaded on every request: both sides retry it, then ask the fallback.
export default {
  what: "--fallback-model with the default model overloaded (529 on every request): the fallback answers, and what the output says about it",
  args: ["-p", "Say hello.", "--fallback-model", "claude-haiku-4-5", "--output-format", "json"],
  script: {
    main: (request) =>
      String(request.body.model).startsWith("claude-haiku") ? text("Hello!") : { content: [], fault: "529" },
  },
  timeoutMs: 180_000,
} satisfies CliScenario;
