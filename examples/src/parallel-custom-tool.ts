/**
 * 32 queries at once in one process, each with an in-process custom tool. They share one worker
 * pool and one API client; each result says what its sub-agents cost (`subagentUsage`).
 * `node examples/dist/parallel-custom-tool.js`
 */
import { readFile } from "node:fs/promises";
import { createSdkMcpServer, query, tool } from "@forkloop/sdk";
import { z } from "zod";

const lineCount = tool(
  "line_count",
  "Counts the lines of a text file",
  { path: z.string().describe("the file, relative to the project") },
  async ({ path }) => {
    const text = await readFile(path, "utf8");
    return { content: [{ type: "text", text: `${path}: ${text.split("\n").length} lines` }] };
  },
  { annotations: { readOnlyHint: true } },
);
const files = createSdkMcpServer({ name: "files", tools: [lineCount] });

const started = Date.now();
const answers = await Promise.all(
  Array.from({ length: 32 }, async (_, index) => {
    const prompt = `How many lines does ${index % 2 === 0 ? "package.json" : "tsconfig.json"} have?`;
    // Only the custom tool: the model must use it (tools: [] leaves out the built-in ones).
    for await (const message of query({ prompt, options: { tools: [], mcpServers: { files } } })) {
      if (message.type === "result") return message;
    }
    throw new Error("no result");
  }),
);
const ok = answers.filter((answer) => answer.subtype === "success").length;
const cost = answers.reduce((sum, answer) => sum + answer.total_cost_usd, 0);
console.log(`${ok}/32 succeeded in ${Date.now() - started} ms, $${cost.toFixed(4)} in all`);
const first = answers[0];
console.log(first?.subtype === "success" ? first.result : first?.errors.join("; "));
process.exitCode = ok === 32 ? 0 : 1;
