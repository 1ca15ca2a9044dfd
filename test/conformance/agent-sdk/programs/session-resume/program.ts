// Resuming a session, as in the Agent SDK's "Session management" guide: the second query resumes
// the first one's session id and sees its history.
import { query } from "@anthropic-ai/claude-agent-sdk";

let sessionId: string | undefined;
for await (const message of query({ prompt: "Remember the word mango." })) {
  if (message.type === "system" && message.subtype === "init") sessionId = message.session_id;
  if (message.type === "result") console.log(`first: ${message.subtype}`);
}

for await (const message of query({
  prompt: "Which word did I ask you to remember?",
  options: { resume: sessionId },
})) {
  if (message.type === "system" && message.subtype === "init")
    console.log(`same session: ${message.session_id === sessionId}`);
  if (message.type === "result" && message.subtype === "success") console.log(`second: ${message.result}`);
}
