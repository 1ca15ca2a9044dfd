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
        return toolCall("Read", { file_path: `${request.work}/notes.txt` });
      }
      return text(
        asked ? "It says bananas are yellow; the first word is Bananas." : "It says bananas are yellow.",
      );
    },
  },
} satisfies ProgramCase;
