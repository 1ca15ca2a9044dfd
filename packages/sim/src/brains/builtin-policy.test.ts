import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "../server.js";
import type { BrainRequest, Simulator } from "../types.js";
import { builtinPolicyBrain, describeContent, findFilePath } from "./builtin-policy.js";
import { requestedSections } from "./compaction-summary.js";

let sim: Simulator;
let client: Anthropic;
let dir: string;

beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
  dir = await mkdtemp(join(tmpdir(), "sim-policy-"));
});
afterAll(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

const MODEL = "claude-haiku-4-5";
const READ_TOOL = {
  name: "Read",
  description: "Read a file",
  input_schema: {
    type: "object" as const,
    properties: { file_path: { type: "string" } },
    required: ["file_path"],
  },
};

function catN(text: string): string {
  return text
    .split("\n")
    .map((line, i) => `${String(i + 1).padStart(6)}\t${line}`)
    .join("\n");
}

describe("the built-in policy brain", () => {
  it("reads the file the prompt names with the read tool it finds, then summarises its content", async () => {
    const path = join(dir, "greeting.ts");
    await writeFile(
      path,
      "// Greets people politely.\nexport function greet(name: string) {\n  return 'hi ' + name;\n}\nexport const DEFAULT = 'x';\n",
    );
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: `Summarize ${path}` }];
    const first = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [READ_TOOL],
      messages,
    });
    expect(first.stop_reason).toBe("tool_use");
    const tool = first.content.find((b) => b.type === "tool_use") as Anthropic.ToolUseBlock;
    expect(tool.name).toBe("Read");
    expect(tool.input).toEqual({ file_path: path });

    // The client runs the tool for real.
    const content = catN(await readFile((tool.input as { file_path: string }).file_path, "utf8"));
    messages.push({ role: "assistant", content: first.content });
    messages.push({ role: "user", content: [{ type: "tool_result", tool_use_id: tool.id, content }] });
    const second = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [READ_TOOL],
      messages,
    });
    expect(second.stop_reason).toBe("end_turn");
    const text = (second.content[0] as Anthropic.TextBlock).text;
    expect(text).toContain(`Summary of ${path}: 5 lines.`);
    expect(text).toContain('First heading/comment: "Greets people politely."');
    expect(text).toContain("Exported names: greet, DEFAULT.");
    expect(text).toMatch(/simulator/);
    expect(text).not.toMatch(/\bI am (Claude|an AI model)\b/);
  });

  it("uses a tool whose schema has `path` when there is no Read tool", async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [{ name: "cat", input_schema: { type: "object", properties: { path: { type: "string" } } } }],
      messages: [{ role: "user", content: "What is in ./docs/guide.md?" }],
    });
    expect(message.content.find((b) => b.type === "tool_use")).toMatchObject({
      name: "cat",
      input: { path: "./docs/guide.md" },
    });
  });

  it("answers briefly and honestly when there is nothing to read", async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      messages: [{ role: "user", content: "Hello there" }],
    });
    expect(message.stop_reason).toBe("end_turn");
    expect((message.content[0] as Anthropic.TextBlock).text).toMatch(/simulator.*not a language model/);
  });

  it("reports a tool error", async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 500,
      tools: [READ_TOOL],
      messages: [
        { role: "user", content: "Summarize a.ts" },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "Read", input: { file_path: "a.ts" } }],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_1", content: "File does not exist.", is_error: true },
          ],
        },
      ],
    });
    expect((message.content[0] as Anthropic.TextBlock).text).toContain(
      "The tool reported an error for a.ts: File does not exist.",
    );
  });

  it("answers a compaction request with the asked sections and carries facts over", async () => {
    const prompt = [
      "Your task is to create a detailed summary of the conversation so far.",
      "Your summary should include the following sections:",
      "1. Primary Request and Intent: what the user asked",
      "2. Key Technical Concepts: …",
      "3. Pending Tasks: …",
    ].join("\n");
    const message = await client.messages.create(
      {
        model: MODEL,
        max_tokens: 2000,
        messages: [
          { role: "user", content: "Refactor the parser.\nPlease remember: the needle is 7731." },
          { role: "assistant", content: "On it." },
          { role: "user", content: "task: keep the public API stable" },
          { role: "assistant", content: "Noted." },
          { role: "user", content: prompt },
        ],
      },
      { headers: { "x-forkloop-query-source": "compact" } },
    );
    const text = (message.content[0] as Anthropic.TextBlock).text;
    expect(text).toMatch(/^<summary>/);
    expect(text).toContain("## Primary Request and Intent");
    expect(text).toContain("## Key Technical Concepts");
    expect(text).toContain("## Pending Tasks");
    expect(text).toContain("Please remember: the needle is 7731.");
    expect(text).toContain("task: keep the public API stable");
    expect(text).toContain("First user request: Refactor the parser.");
  });

  it("a new prompt merged with the compaction instruction into one user turn is the current request (compaction at the start of a turn)", async () => {
    const message = await client.messages.create(
      {
        model: MODEL,
        max_tokens: 2000,
        messages: [
          { role: "user", content: "Refactor the parser." },
          { role: "assistant", content: "Done." },
          {
            role: "user",
            content: [
              { type: "text", text: "Now rename the lexer module." },
              { type: "text", text: "Your task is to create a detailed summary of the conversation so far." },
            ],
          },
        ],
      },
      { headers: { "x-forkloop-query-source": "compact" } },
    );
    const text = (message.content[0] as Anthropic.TextBlock).text;
    expect(text).toContain("First user request: Refactor the parser.");
    expect(text).toContain("Current request: Now rename the lexer module.");
  });

  it("detects a compaction request by its wording too", async () => {
    const message = await client.messages.create({
      model: MODEL,
      max_tokens: 2000,
      messages: [
        { role: "user", content: "remember the code word: tulip" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "Please write a summary of the conversation so far." },
      ],
    });
    expect((message.content[0] as Anthropic.TextBlock).text).toContain("remember the code word: tulip");
  });
});

describe("honesty (SPEC §0)", () => {
  it("every kind of built-in reply says it comes from the simulator, not a model", () => {
    const request = (
      messages: BrainRequest["body"]["messages"],
      querySource: string | null = null,
    ): BrainRequest => ({
      body: { model: "m", max_tokens: 100, tools: [READ_TOOL], messages },
      turnIndex: 0,
      lastUserText: null,
      lastToolResults: [],
      toolNames: ["Read"],
      querySource,
      apiKey: "",
      seed: 0,
    });
    const replies = [
      builtinPolicyBrain({ ...request([{ role: "user", content: "read a.ts" }]), lastUserText: "read a.ts" }),
      builtinPolicyBrain({ ...request([{ role: "user", content: "hi" }]), lastUserText: "hi" }),
      builtinPolicyBrain(request([{ role: "user", content: "summarise" }], "compact")),
      builtinPolicyBrain({
        ...request([{ role: "user", content: "x" }]),
        lastToolResults: [{ tool_use_id: "t", content: "1\tx", is_error: false }],
      }),
    ];
    for (const reply of replies) {
      const text = reply.content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join(" ");
      expect(text).toContain("forkloop simulator, built-in policy — not a language model");
    }
  });
});

describe("compaction summaries", () => {
  it("finds numbered and heading sections, ignoring prose and bullets", () => {
    const prompt = [
      "Write the summary inside <summary></summary> tags with exactly these Markdown sections:",
      "1. ## Goal and constraints",
      "2. ## Files read and modified",
      "3. Pending work: what remains",
      "## Next step",
      '- Under "Goal and constraints", restate the request.',
    ].join("\n");
    expect(requestedSections(prompt)).toEqual([
      "Goal and constraints",
      "Files read and modified",
      "Pending work",
      "Next step",
    ]);
  });

  it("fills sections by keyword: current request, files, errors, next step", async () => {
    const message = await client.messages.create(
      {
        model: MODEL,
        max_tokens: 2000,
        tools: [{ name: "Read", input_schema: { type: "object" } }],
        messages: [
          { role: "user", content: "Fix the flaky parser test" },
          {
            role: "assistant",
            content: [
              { type: "tool_use", id: "toolu_a", name: "Read", input: { file_path: "src/parser.ts" } },
            ],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "toolu_a",
                content: "EACCES: permission denied",
                is_error: true,
              },
            ],
          },
          { role: "assistant", content: "The file is not readable." },
          { role: "user", content: "Then rename the helper in src/util.ts" },
          { role: "assistant", content: "Will do." },
          {
            role: "user",
            content:
              "1. ## Goal and constraints\n2. ## Files read and modified\n3. ## Errors and fixes\n4. ## Next step",
          },
        ],
      },
      { headers: { "x-forkloop-query-source": "compact" } },
    );
    const text = (message.content[0] as Anthropic.TextBlock).text;
    expect(text).toContain("- Current request: Then rename the helper in src/util.ts");
    expect(text).toContain("## Files read and modified\n- src/parser.ts (Read)");
    expect(text).toContain("## Errors and fixes\n- EACCES: permission denied");
    expect(text).toContain("## Next step\n- Continue with: Then rename the helper in src/util.ts");
  });
});

describe("built-in policy helpers", () => {
  it.each([
    ["Summarize packages/sim/src/index.ts", "packages/sim/src/index.ts"],
    ["read /tmp/x/notes.txt now", "/tmp/x/notes.txt"],
    ["look at `./README.md`", "./README.md"],
    ["e.g. nothing here", null],
    ["no path", null],
  ])("findFilePath(%j) = %j", (text, path) => {
    expect(findFilePath(text)).toBe(path);
  });

  it("describeContent skips comment punctuation, keeps Markdown headings, counts imports", () => {
    expect(
      describeContent("a.ts", 'import x from "x";\n/**\n * The real first line.\n */\nexport class A {}'),
    ).toBe(
      'Summary of a.ts: 5 lines, 1 imports. First heading/comment: "The real first line.". Exported names: A.',
    );
    expect(describeContent("R.md", "# Title\ntext")).toContain('First heading/comment: "# Title"');
  });

  it("describeContent falls back to defined names and frequent words", () => {
    expect(describeContent("x.py", "def alpha():\n  pass\nclass Beta:\n  pass")).toBe(
      "Summary of x.py: 4 lines. Defined names: alpha, Beta.",
    );
    expect(describeContent("notes", "apples apples pears\napples pears")).toBe(
      "Summary of notes: 2 lines. Most frequent words: apples, pears.",
    );
  });
});
