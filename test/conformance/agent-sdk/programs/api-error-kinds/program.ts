// Two queries the API refuses: for a low credit balance (402) and as forbidden (403). Each
// failure is named by its kind, in the assistant message and to the StopFailure hook.
import { type HookCallback, query } from "@anthropic-ai/claude-agent-sdk";

const failed: HookCallback = async (input) => {
  if (input.hook_event_name === "StopFailure")
    console.log(`StopFailure ${input.error}: ${input.last_assistant_message}`);
  return {};
};

async function ask(prompt: string): Promise<void> {
  try {
    for await (const message of query({
      prompt,
      options: { hooks: { StopFailure: [{ hooks: [failed] }] } },
    })) {
      if (message.type === "assistant") console.log(`assistant (error: ${message.error ?? "none"})`);
      if (message.type === "result" && message.subtype === "success") console.log(message.result);
    }
  } catch (error) {
    console.log(`threw: ${error instanceof Error ? error.message : String(error)}`);
  }
}

await ask("Spend some credit.");
await ask("Use the forbidden model.");
