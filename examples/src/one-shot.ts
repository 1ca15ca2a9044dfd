/**
 * A one-shot query, as with the Claude Agent SDK: `node examples/dist/one-shot.js [prompt]`.
 * Without ANTHROPIC_API_KEY the embedded simulator answers (and says so on stderr).
 */
import { query } from "@forkloop/sdk";

const prompt = process.argv[2] ?? "Summarize package.json";
for await (const message of query({ prompt, options: { cwd: process.cwd(), allowedTools: ["Read"] } })) {
  if (message.type === "assistant") {
    for (const block of message.message.content) {
      if (block.type === "tool_use") console.log(`→ ${block.name} ${JSON.stringify(block.input)}`);
    }
  }
  if (message.type === "result") {
    console.log(message.subtype === "success" ? message.result : `failed: ${message.errors.join("; ")}`);
    console.log(
      `${message.num_turns} turns, $${message.total_cost_usd.toFixed(4)}, cache-read share ${message.cacheReadShare.toFixed(2)}`,
    );
    process.exitCode = message.is_error ? 1 : 0;
  }
}
