// A spending limit, as in the Agent SDK's reference (Options.maxBudgetUsd): a budget smaller than
// one request costs.
import { query } from "@anthropic-ai/claude-agent-sdk";

for await (const message of query({
  prompt: "Read notes.txt and summarize it.",
  options: { maxBudgetUsd: 0.0001, allowedTools: ["Read"] },
})) {
  if (message.type === "result") {
    console.log(
      `${message.subtype}, is_error ${message.is_error}, over budget ${message.total_cost_usd > 0.0001}`,
    );
  }
}
