import { byTurn, text, toolCall } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const LINE = "x".repeat(299);
// A PostToolBatch answer whose additionalContext is `body` (a shell word that prints it, JSON-escaped).
const answer = (body: string) =>
  `cat > /dev/null; printf '{"hookSpecificOutput":{"hookEventName":"PostToolBatch","additionalContext":"%s"}}' "${body}"`;
// 10,000 characters: the most Claude Code hands the model as they are.
const whole = answer(`CTXA$(printf '%9996s' '' | tr ' ' x)`);
// 12,005 characters in lines of 299 (JSON's \n between them).
const long = answer(`CTXB\\\\n$(for i in $(seq 40); do printf '%299s\\\\n' '' | tr ' ' x; done)`);
// 12,905 characters with one line break, at 904: too early to end the preview at.
const early = answer(`CTXL$(printf '%900s' '' | tr ' ' x)\\\\n$(printf '%12000s' '' | tr ' ' x)`);

export default {
  what: "hooks whose additionalContext is 10,000 characters (kept whole) and 12,005 in lines (saved to a file; the model gets its size, the file and a preview ending at a line break past its half) and 12,905 with a line break before the half (a preview of 2,000 characters)",
  args: ["-p", "Read notes.txt.", "--output-format", "json"],
  files: { "notes.txt": "hello\n" },
  home: {
    ".claude/settings.json": JSON.stringify({
      hooks: {
        PostToolBatch: [
          { hooks: [{ type: "command", command: whole }] },
          { hooks: [{ type: "command", command: long }] },
          { hooks: [{ type: "command", command: early }] },
        ],
      },
    }),
  },
  lastRequestTexts: [
    `CTXA${"x".repeat(9_996)}`,
    `CTXB\n${`${LINE}\n`.repeat(40)}`,
    "Output too large (11.7KB). Full output saved to: ",
    `Preview (first 2KB):\nCTXB\n${`${LINE}\n`.repeat(5)}${LINE}\n...\n</persisted-output>`,
    `Preview (first 2KB):\nCTXL${"x".repeat(900)}\n${"x".repeat(1_095)}\n...\n</persisted-output>`,
  ],
  script: {
    main: (request) =>
      byTurn(request, [toolCall("Read", { file_path: `${request.work}/notes.txt` }), text("It says hello.")]),
  },
} satisfies CliScenario;
