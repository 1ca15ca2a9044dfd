import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../server.js";
import type { Simulator } from "../types.js";
import { planOf } from "./user-task.js";

/** The built-in policy reads the user's own text, fans out, and edits. */
let sim: Simulator;
let client: Anthropic;
beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

const schema = (...fields: string[]) => ({
  type: "object" as const,
  properties: Object.fromEntries(fields.map((f) => [f, { type: "string" }])),
});
const READ = { name: "Read", input_schema: schema("file_path") };
const EDIT = { name: "Edit", input_schema: schema("file_path", "old_string", "new_string") };
const GLOB = { name: "Glob", input_schema: schema("pattern") };
const AGENT = { name: "Agent", input_schema: schema("description", "prompt") };

type Message = Anthropic.MessageParam;
async function turn(messages: Message[], tools: Anthropic.Tool[]): Promise<Anthropic.Message> {
  return client.messages.create({ model: "claude-sonnet-4-6", max_tokens: 2000, tools, messages });
}
const uses = (message: Anthropic.Message) =>
  message.content.filter((b): b is Anthropic.ToolUseBlock => b.type === "tool_use");
const text = (message: Anthropic.Message) =>
  message.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
/** The next history: the reply, then a result for each of its calls. */
function answer(messages: Message[], reply: Anthropic.Message, results: string[]): Message[] {
  const content = uses(reply).map((use, i) => ({
    type: "tool_result" as const,
    tool_use_id: use.id,
    content: results[i] ?? "",
  }));
  return [...messages, { role: "assistant", content: reply.content }, { role: "user", content }];
}

const REMINDER =
  "<system-reminder>\nGit status: clean. Commit trailer: Co-Authored-By: Claude Opus 5.5 <noreply@example.com>\n</system-reminder>";

describe("the built-in policy reads the user's own text", () => {
  it("reads only the user's own text: a <system-reminder> naming 'Opus 5.5' is not a file", async () => {
    const plain = await turn(
      [
        {
          role: "user",
          content: [
            { type: "text", text: REMINDER },
            { type: "text", text: "Hello" },
          ],
        },
      ],
      [READ],
    );
    expect(uses(plain)).toEqual([]);
    expect(text(plain)).toContain('Received a message of 1 words: "Hello"');
    const reading = await turn(
      [{ role: "user", content: [{ type: "text", text: `${REMINDER}\nSummarize src/a.ts` }] }],
      [READ],
    );
    expect(uses(reading).map((u) => u.input)).toEqual([{ file_path: "src/a.ts" }]);
    // A version is not a file either, reminder or not.
    expect(planOf("What is new in Claude 5.5?")).toEqual({ kind: "files", paths: [], globs: [] });
  });

  it("several files with an Agent tool: one sub-agent per file in one turn, then a summary of their reports", async () => {
    const messages: Message[] = [{ role: "user", content: "Summarize src/a.ts, src/b.ts and docs/c.md" }];
    const fan = await turn(messages, [READ, AGENT]);
    expect(fan.stop_reason).toBe("tool_use");
    expect(uses(fan).map((u) => [u.name, u.input])).toEqual([
      ["Agent", { description: "Summarize a.ts", prompt: "Summarize src/a.ts" }],
      ["Agent", { description: "Summarize b.ts", prompt: "Summarize src/b.ts" }],
      ["Agent", { description: "Summarize c.md", prompt: "Summarize docs/c.md" }],
    ]);
    const done = await turn(answer(messages, fan, ["a: 3 lines", "b: 9 lines", "c: a heading"]), [
      READ,
      AGENT,
    ]);
    expect(done.stop_reason).toBe("end_turn");
    expect(text(done)).toContain("3 sub-agents finished:\n- Summarize a.ts (reported): a: 3 lines");
    expect(text(done)).toContain("not a language model");
    // Without an Agent tool the same prompt reads the files in parallel.
    expect(uses(await turn(messages, [READ])).map((u) => u.input)).toEqual([
      { file_path: "src/a.ts" },
      { file_path: "src/b.ts" },
      { file_path: "docs/c.md" },
    ]);
  });

  it("a glob: Glob first, then one sub-agent per listed file (sorted, so the order is stable)", async () => {
    const messages: Message[] = [{ role: "user", content: "Summarize packages/*/src/*.ts" }];
    const listing = await turn(messages, [READ, GLOB, AGENT]);
    expect(uses(listing).map((u) => [u.name, u.input])).toEqual([
      ["Glob", { pattern: "packages/*/src/*.ts" }],
    ]);
    const fan = await turn(answer(messages, listing, ["/r/packages/z/src/b.ts\n/r/packages/a/src/a.ts"]), [
      READ,
      GLOB,
      AGENT,
    ]);
    expect(uses(fan).map((u) => (u.input as { prompt: string }).prompt)).toEqual([
      "Summarize /r/packages/a/src/a.ts",
      "Summarize /r/packages/z/src/b.ts",
    ]);
  });

  it("rename X to Y in FILE: Read, then Edit with replace_all, then a report", async () => {
    const tools = [READ, EDIT];
    const messages: Message[] = [
      { role: "user", content: "Please rename oldName to newName in src/util.ts" },
    ];
    const read = await turn(messages, tools);
    expect(uses(read).map((u) => [u.name, u.input])).toEqual([["Read", { file_path: "src/util.ts" }]]);
    const afterRead = answer(messages, read, ["     1\texport const oldName = 1;\n     2\tuse(oldName);"]);
    const edit = await turn(afterRead, tools);
    expect(uses(edit).map((u) => [u.name, u.input])).toEqual([
      ["Edit", { file_path: "src/util.ts", old_string: "oldName", new_string: "newName", replace_all: true }],
    ]);
    const done = await turn(answer(afterRead, edit, ["The file src/util.ts has been updated."]), tools);
    expect(text(done)).toContain("Renamed oldName to newName in src/util.ts.");
    const missing = await turn(answer(messages, read, ["     1\tsomething else"]), tools);
    expect(text(missing)).toContain("does not contain oldName");
  });

  it("Claude Code's Task tool, which requires subagent_type: each sub-agent call carries every required field", async () => {
    const task = {
      name: "Task",
      input_schema: {
        ...schema("description", "prompt", "subagent_type"),
        required: ["description", "prompt", "subagent_type"],
      },
    };
    const fan = await turn([{ role: "user", content: "Summarize src/a.ts and src/b.ts" }], [READ, task]);
    expect(uses(fan).map((u) => u.input)).toEqual([
      { description: "Summarize a.ts", prompt: "Summarize src/a.ts", subagent_type: "general-purpose" },
      { description: "Summarize b.ts", prompt: "Summarize src/b.ts", subagent_type: "general-purpose" },
    ]);
  });

  it.each([
    ["rename the function computeTotal to sumAll in src/cart.ts", "computeTotal", "sumAll", "src/cart.ts"],
    ["Rename class `Cart` as `Basket` in lib/cart.js", "Cart", "Basket", "lib/cart.js"],
  ])("a rename that names the kind of symbol (%s) is still a rename", (prompt, from, to, file) => {
    expect(planOf(prompt)).toEqual({ kind: "rename", from, to, file });
  });

  it("a fork's directive after placeholder tool results is a new task, not results to summarise", async () => {
    const parent: Message[] = [
      { role: "user", content: "Summarize src/a.ts and src/b.ts" },
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_p1", name: "Agent", input: { prompt: "Summarize src/a.ts" } },
        ],
      },
    ];
    const fork = await turn(
      [
        ...parent,
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_p1",
              content: "This call is being handled by the parent agent",
            },
            { type: "text", text: "You are a sub-agent.\n\nYour task (Summarize a.ts):\nSummarize src/a.ts" },
          ],
        },
      ],
      [READ, AGENT],
    );
    expect(uses(fork).map((u) => [u.name, u.input])).toEqual([["Read", { file_path: "src/a.ts" }]]);
  });
});
