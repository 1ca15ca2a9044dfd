import { type ScriptRequest, text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

/** Assistant replies before this request (Claude Code also sends role "system" messages). */
function earlierTurns(request: ScriptRequest): number {
  return request.body.messages.filter((message) => message.role === "assistant").length;
}

export default {
  what: "forkSession: a new session id with the old history; both sessions listed",
  script: {
    main: (request) =>
      request.lastUserText?.includes("Faro")
        ? text(`Faro plan (${earlierTurns(request)} earlier turns).`)
        : text("Porto plan."),
  },
} satisfies ProgramCase;
