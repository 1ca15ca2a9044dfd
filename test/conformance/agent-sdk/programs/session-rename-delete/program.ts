// Managing stored sessions, as in the Agent SDK's "Session management" guide: rename, tag, read
// its info back, then delete it.
import {
  deleteSession,
  getSessionInfo,
  listSessions,
  query,
  renameSession,
  tagSession,
} from "@anthropic-ai/claude-agent-sdk";

let sessionId = "";
for await (const message of query({ prompt: "Start a grocery list: milk." })) {
  if (message.type === "result") sessionId = message.session_id;
}

await renameSession(sessionId, "Groceries", { dir: process.cwd() });
await tagSession(sessionId, "home", { dir: process.cwd() });
const info = await getSessionInfo(sessionId, { dir: process.cwd() });
console.log(`title: ${info?.customTitle ?? info?.summary}, tag: ${info?.tag}`);
await deleteSession(sessionId, { dir: process.cwd() });
console.log(`after delete: ${(await listSessions({ dir: process.cwd() })).length} sessions`);
