import { text } from "../../support/script.js";
import type { CliScenario } from "../scenario.js";

const line = (content: string) => JSON.stringify({ type: "user", message: { role: "user", content } });

export default {
  what: "--replay-user-messages: each stdin user message is echoed back on stdout before its answer",
  args: [
    "-p",
    "--input-format",
    "stream-json",
    "--output-format",
    "stream-json",
    "--verbose",
    "--replay-user-messages",
  ],
  stdin: `${line("Say hello.")}\n${line("Say bye.")}\n`,
  script: { main: (request) => text((request.lastUserText ?? "").includes("bye") ? "Bye!" : "Hello!") },
} satisfies CliScenario;
