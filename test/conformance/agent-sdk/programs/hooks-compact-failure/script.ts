import { type ScriptRequest, text } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

const SUMMARY = "<summary>The user asked for a greeting; the assistant said hello.</summary>";

function lastUserText(request: ScriptRequest): string {
  return JSON.stringify(request.body.messages.at(-1) ?? "");
}

export default {
  what: "PreCompact, PostCompact and StopFailure callbacks: a /compact, then a turn the API refuses",
  script: {
    main: (request) => {
      const last = lastUserText(request);
      // The compaction's request: its last message asks for the summary (each side in its words).
      if (/TEXT ONLY|write a summary/.test(last)) return text(SUMMARY);
      const all = JSON.stringify(request.body.messages);
      if (all.includes("Now fail")) return { content: [], fault: "400" };
      return text("Hello!");
    },
    side: () => text(SUMMARY),
  },
} satisfies ProgramCase;
