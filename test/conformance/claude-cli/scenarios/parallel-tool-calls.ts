import { byTurn, text, toolCalls } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

export default {
  what: "one reply with two tool calls: a stream-json line per block and per result, each with its own uuid",
  args: ["-p", "Read a.txt and b.txt.", "--output-format", "stream-json", "--verbose"],
  files: { "a.txt": "alpha\n", "b.txt": "beta\n" },
  script: {
    main: (request) =>
      byTurn(request, [
        toolCalls([
          { name: "Read", input: { file_path: `${request.work}/a.txt` } },
          { name: "Read", input: { file_path: `${request.work}/b.txt` } },
        ]),
        text("alpha and beta."),
      ]),
  },
} satisfies CliScenario;
