import Anthropic from "@anthropic-ai/sdk";
import type { BetaMessageParam } from "@anthropic-ai/sdk/resources/beta/messages/messages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLEARED_TOOL_RESULT_TEXT } from "./context-editing.js";
import { startSimulator } from "./server.js";
import { sequenceBrain, textOfTokens } from "./testing/index.js";
import type { Simulator } from "./types.js";

/** api doc §9: server-side context editing (`context_management`, beta `context-management-2025-06-27`). */
const BETA = "context-management-2025-06-27";
const MODEL = "claude-sonnet-5"; // minimum cacheable length 1024 (registry)
const TOOLS = ["Read", "Bash", "Grep"].map((name) => ({
  name,
  description: `${name} tool`,
  input_schema: { type: "object" as const },
}));

/** A user prompt, then `names.length` tool uses, each answered by a result of `resultTokens`. */
function toolSession(names: readonly string[], resultTokens = 100): BetaMessageParam[] {
  const messages: BetaMessageParam[] = [{ role: "user", content: "Investigate the repository." }];
  names.forEach((name, i) => {
    messages.push({
      role: "assistant",
      content: [{ type: "tool_use", id: `toolu_${i}`, name, input: { path: `/src/file${i}.ts` } }],
    });
    messages.push({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: `toolu_${i}`, content: textOfTokens(resultTokens, `r${i}x`) },
      ],
    });
  });
  return messages;
}

let sim: Simulator;
let client: Anthropic;
const brain = sequenceBrain([[{ type: "text", text: "noted" }]]);

beforeAll(async () => {
  sim = await startSimulator({ brain });
  client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

type ClearToolUses = Anthropic.Beta.Messages.BetaClearToolUses20250919Edit;

interface EditCase {
  name: string;
  tools: readonly string[];
  edit: Omit<ClearToolUses, "type">;
  /** Tool use ids whose results the model sees cleared; empty = the edit does not apply. */
  cleared: readonly string[];
}

const six = ["Read", "Bash", "Read", "Grep", "Read", "Bash"];
const CASES: EditCase[] = [
  { name: "default trigger (100,000 input tokens) not reached", tools: six, edit: {}, cleared: [] },
  {
    name: "input_tokens trigger reached, default keep 3",
    tools: six,
    edit: { trigger: { type: "input_tokens", value: 300 } },
    cleared: ["toolu_0", "toolu_1", "toolu_2"],
  },
  {
    name: "input_tokens trigger not reached",
    tools: six,
    edit: { trigger: { type: "input_tokens", value: 10_000 } },
    cleared: [],
  },
  {
    name: "tool_uses trigger reached, keep 1",
    tools: six,
    edit: { trigger: { type: "tool_uses", value: 5 }, keep: { type: "tool_uses", value: 1 } },
    cleared: ["toolu_0", "toolu_1", "toolu_2", "toolu_3", "toolu_4"],
  },
  {
    name: "tool_uses trigger at (not over) the count",
    tools: six,
    edit: { trigger: { type: "tool_uses", value: 6 } },
    cleared: [],
  },
  {
    name: "exclude_tools: Read is never cleared nor counted toward keep",
    tools: six,
    edit: {
      trigger: { type: "tool_uses", value: 1 },
      keep: { type: "tool_uses", value: 1 },
      exclude_tools: ["Read"],
    },
    cleared: ["toolu_1", "toolu_3"],
  },
  {
    name: "clear_at_least not reachable: nothing is cleared",
    tools: six,
    edit: {
      trigger: { type: "tool_uses", value: 1 },
      keep: { type: "tool_uses", value: 5 },
      clear_at_least: { type: "input_tokens", value: 5_000 },
    },
    cleared: [],
  },
  {
    name: "clear_at_least reachable",
    tools: six,
    edit: {
      trigger: { type: "tool_uses", value: 1 },
      keep: { type: "tool_uses", value: 4 },
      clear_at_least: { type: "input_tokens", value: 150 },
    },
    cleared: ["toolu_0", "toolu_1"],
  },
];

describe("api doc §9: clear_tool_uses_20250919", () => {
  it.each(CASES)("$name", async ({ tools, edit, cleared }) => {
    const messages = toolSession(tools);
    const original = await client.beta.messages.countTokens({ model: MODEL, tools: TOOLS, messages });
    const message = await client.beta.messages.create({
      model: MODEL,
      max_tokens: 100,
      betas: [BETA],
      tools: TOOLS,
      messages,
      context_management: { edits: [{ type: "clear_tool_uses_20250919", ...edit }] },
    });
    const seen = brain.seen.at(-1)?.body.messages ?? [];
    const clearedIds = seen.flatMap((m) =>
      typeof m.content === "string"
        ? []
        : m.content.flatMap((b) =>
            b.type === "tool_result" && b.content === CLEARED_TOOL_RESULT_TEXT ? [b.tool_use_id] : [],
          ),
    );
    expect(clearedIds).toEqual(cleared);
    const total = message.usage.input_tokens;
    if (cleared.length === 0) {
      expect(message.context_management).toEqual({ applied_edits: [] });
      expect(total).toBe(original.input_tokens);
      return;
    }
    const [applied] = message.context_management?.applied_edits ?? [];
    expect(applied).toEqual({
      type: "clear_tool_uses_20250919",
      cleared_tool_uses: cleared.length,
      cleared_input_tokens: original.input_tokens - total,
    });
    expect(applied?.cleared_input_tokens).toBeGreaterThan(0);
    expect(sim.requests().at(-1)?.contextManagement).toEqual(message.context_management);
  });

  it("clear_tool_inputs empties the inputs of the named tools' cleared uses only", async () => {
    await client.beta.messages.create({
      model: MODEL,
      max_tokens: 100,
      betas: [BETA],
      tools: TOOLS,
      messages: toolSession(["Read", "Bash", "Read"]),
      context_management: {
        edits: [
          {
            type: "clear_tool_uses_20250919",
            trigger: { type: "tool_uses", value: 1 },
            keep: { type: "tool_uses", value: 1 },
            clear_tool_inputs: ["Bash"],
          },
        ],
      },
    });
    const inputs = (brain.seen.at(-1)?.body.messages ?? []).flatMap((m) =>
      typeof m.content === "string" ? [] : m.content.flatMap((b) => (b.type === "tool_use" ? [b.input] : [])),
    );
    expect(inputs).toEqual([{ path: "/src/file0.ts" }, {}, { path: "/src/file2.ts" }]);
  });

  it("streams the applied edits in message_delta (BetaMessageStream puts them on the message)", async () => {
    const stream = client.beta.messages.stream({
      model: MODEL,
      max_tokens: 100,
      betas: [BETA],
      tools: TOOLS,
      messages: toolSession(six),
      context_management: {
        edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "tool_uses", value: 1 } }],
      },
    });
    const deltas: unknown[] = [];
    stream.on("streamEvent", (event) => {
      if (event.type === "message_delta") deltas.push(event.context_management);
    });
    const message = await stream.finalMessage();
    expect(deltas).toEqual([message.context_management]);
    expect(message.context_management?.applied_edits[0]).toMatchObject({ cleared_tool_uses: 3 });
  });

  it("count_tokens counts the edited prompt and reports the original count", async () => {
    const messages = toolSession(six);
    const plain = await client.beta.messages.countTokens({ model: MODEL, tools: TOOLS, messages });
    const edited = await client.beta.messages.countTokens({
      model: MODEL,
      betas: [BETA],
      tools: TOOLS,
      messages,
      context_management: {
        edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "tool_uses", value: 1 } }],
      },
    });
    expect(edited.context_management).toEqual({ original_input_tokens: plain.input_tokens });
    expect(edited.input_tokens).toBeLessThan(plain.input_tokens);
  });
});

describe("api doc §9: validation", () => {
  const expect400 = async (body: object, betas: string[], message: string) => {
    const error = await client.beta.messages
      .create({
        model: MODEL,
        max_tokens: 100,
        tools: TOOLS,
        messages: toolSession(["Read"]),
        ...body,
        betas,
      } as never)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.BadRequestError);
    expect((error as InstanceType<typeof Anthropic.BadRequestError>).message).toContain(message);
  };

  it("rejects context_management without the beta header, naming the field", async () => {
    await expect400(
      { context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] } },
      [],
      "context_management: Extra inputs are not permitted",
    );
  });

  it("rejects an unknown edit type and a bad keep", async () => {
    await expect400(
      { context_management: { edits: [{ type: "clear_everything" }] } },
      [BETA],
      "context_management.edits.0",
    );
    await expect400(
      { context_management: { edits: [{ type: "clear_tool_uses_20250919", keep: { type: "tool_uses" } }] } },
      [BETA],
      "context_management.edits.0.clear_tool_uses_20250919.keep.value: Field required",
    );
  });

  it("clear_thinking_20251015 must come first", async () => {
    await expect400(
      {
        context_management: {
          edits: [{ type: "clear_tool_uses_20250919" }, { type: "clear_thinking_20251015" }],
        },
      },
      [BETA],
      "clear_thinking_20251015 must be the first edit",
    );
  });
});
