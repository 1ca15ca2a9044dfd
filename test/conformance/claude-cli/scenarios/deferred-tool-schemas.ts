import { type ScriptRequest, text, toolCall, UnexpectedRequest } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

/**
 * The tools Claude Code 2.1.332 lists as deferred in its first request (behind ToolSearch, no
 * schema sent) that forkloop offers directly. Its other deferred tools (Cron*, worktrees,
 * Monitor) forkloop does not have.
 */
const DEFERRED = ["TaskStop", "WebFetch", "WebSearch", "NotebookEdit", "SendMessage"];

/**
 * Claude Code's main turn loads them with ToolSearch, so its next request carries their input
 * schemas (`defer_loading` entries of the tools array); forkloop's first request has them
 * already. Either way the reply that ends the run comes only once every one is there: a request
 * without them is reported, so the schema comparison never compares nothing.
 */
function main(request: ScriptRequest) {
  if (DEFERRED.every((name) => request.toolNames.includes(name))) return text("Loaded.");
  if (request.toolNames.includes("ToolSearch") && request.role.kind === "main" && request.role.turn === 0)
    return toolCall("ToolSearch", { query: `select:${DEFERRED.join(",")}` });
  throw new UnexpectedRequest(
    `the request lacks ${DEFERRED.filter((name) => !request.toolNames.includes(name))}`,
  );
}

export default {
  what: "the input schemas of the tools Claude Code defers behind ToolSearch (TaskStop, WebFetch, WebSearch, NotebookEdit, SendMessage), loaded by its main turn, compared with the same tools forkloop offers directly",
  args: ["-p", "Load the background and web tools.", "--output-format", "stream-json", "--verbose"],
  script: { main },
} satisfies CliScenario;
