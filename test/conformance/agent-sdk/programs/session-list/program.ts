// Listing sessions and reading one back, as in the Agent SDK's "Session management" guide.
import { getSessionMessages, listSessions, query } from "@anthropic-ai/claude-agent-sdk";

let sessionId = "";
for await (const message of query({ prompt: "Say hi to the session list." })) {
  if (message.type === "result") sessionId = message.session_id;
}

const sessions = await listSessions({ dir: process.cwd() });
console.log(`sessions: ${sessions.length}, first is ours: ${sessions[0]?.sessionId === sessionId}`);
console.log(`summary: ${sessions[0]?.summary}`);
const messages = await getSessionMessages(sessionId, { dir: process.cwd() });
console.log(`messages: ${messages.map((m) => m.type).join(", ")}`);
