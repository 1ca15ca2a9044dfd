import { type ScriptRequest, text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/** A compaction's request (or its retry): a message asks for the summary. */
function asksForSummary(request: ScriptRequest): boolean {
  return /summary/i.test(JSON.stringify(request.body.messages));
}

export default {
  what: "/compact on a resumed session whose compaction request the API refuses (400): what each prints, where, and its exit code",
  before: [{ args: ["-p", "Say hello.", "--output-format", "json"] }],
  args: ["-p", "/compact", "--resume", "{session}", "--output-format", "json"],
  script: {
    main: (request) => (asksForSummary(request) ? { content: [], fault: "400" } : text("Hello!")),
    side: (request) => (asksForSummary(request) ? { content: [], fault: "400" } : text("Hello!")),
  },
} satisfies CliScenario;
