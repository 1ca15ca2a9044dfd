// Forking a session, as in the Agent SDK's "Session management" guide: resume with forkSession
// starts a new session from the old one's history, leaving the old one as it was.
import { listSessions, query } from "@anthropic-ai/claude-agent-sdk";

let original: string | undefined;
for await (const message of query({ prompt: "Let us plan a trip to Porto." })) {
  if (message.type === "result") original = message.session_id;
}

let forked: string | undefined;
for await (const message of query({
  prompt: "Now plan it for Faro instead.",
  options: { resume: original, forkSession: true },
})) {
  if (message.type === "result") {
    forked = message.session_id;
    console.log(`fork: ${message.subtype}, ${message.num_turns} turns`);
  }
}
console.log(`new session id: ${forked !== undefined && forked !== original}`);
const sessions = await listSessions({ dir: process.cwd() });
console.log(`sessions in this directory: ${sessions.length}`);
