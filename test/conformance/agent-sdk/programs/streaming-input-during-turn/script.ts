import { text, toolCall } from "../../../support/script.js";
import type { ProgramCase } from "../../program-case.js";

export default {
  what: "a message streamed in during a turn: joined into the next user turn or a turn of its own",
  files: { "notes.txt": "Bananas are yellow.\n" },
  script: {
    main: (request) => {
      const sawResult = request.lastToolResults.length > 0;
      const asked = request.body.messages.some(
        (m) => m.role === "user" && JSON.stringify(m.content).includes("first word"),
      );
      if (!sawResult && request.role.kind === "main" && request.role.turn === 0) {
        // The reply's events come 500 ms apart. The Agent SDK yields the tool call at its block's
        // end, so the program's second message has a second to reach the Claude Code process
        // before the tool's result goes back (forkloop, in-process, takes it at once): the joined
        // shape every time, not a race between a loaded process's stdin and a fast Read.
        return {
          ...toolCall("Read", { file_path: `${request.work}/notes.txt` }),
          fault: { kind: "slow", slowMs: 500 },
        };
      }
      return text(
        asked ? "It says bananas are yellow; the first word is Bananas." : "It says bananas are yellow.",
      );
    },
  },
} satisfies ProgramCase;
