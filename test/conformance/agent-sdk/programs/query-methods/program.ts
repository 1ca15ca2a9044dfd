// The Query object's control methods, as in the Agent SDK's reference: asked about the session in
// streaming-input mode before and after the first turn.
import { query, type SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";

let turnDone: () => void = () => {};
const firstTurn = new Promise<void>((resolve) => {
  turnDone = resolve;
});

async function* input(): AsyncGenerator<SDKUserMessage> {
  yield { type: "user", message: { role: "user", content: "Hello." }, parent_tool_use_id: null };
  await firstTurn;
}

const run = query({ prompt: input() });
for await (const message of run) {
  if (message.type === "system" && message.subtype === "init") {
    const models = await run.supportedModels();
    const commands = await run.supportedCommands();
    const servers = await run.mcpServerStatus();
    console.log(`models: ${models.length > 0}, commands: ${commands.length > 0}, servers: ${servers.length}`);
    const init = await run.initializationResult();
    console.log(`initialization result has ${init.models.length > 0 ? "models" : "no models"}`);
    await run.setPermissionMode("acceptEdits");
    await run.setModel("claude-haiku-4-5");
    const usage = await run.getContextUsage();
    console.log(`context usage known: ${usage.totalTokens >= 0}`);
  }
  if (message.type === "result") {
    console.log(`result ${message.subtype}`);
    turnDone();
  }
}
