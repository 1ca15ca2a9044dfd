import { describe, expect, it } from "vitest";
import { findBreakpoints } from "./cache-breakpoints.js";
import { type CacheUsage, PromptCache } from "./prompt-cache.js";
import { layoutPrompt } from "./prompt-layout.js";
import { assistant, type Body, EPH, EPH_1H, system, tools, user } from "./test-support/cache-bodies.js";
import { textOfTokens } from "./testing/index.js";
import { countTokens } from "./tokenizer.js";

const MIN = 10;
const MINUTE = 60_000;

interface Step {
  body: Body;
  /** Clock at which the request is made. */
  at?: number;
  scope?: string;
  model?: string;
  /** Leave the write uncommitted until the next step ran (simultaneous requests). */
  concurrentWithNext?: boolean;
  expect: Partial<CacheUsage> & { write5m?: number; write1h?: number };
}

interface Case {
  name: string;
  steps: Step[];
}

/** A conversation of `turns` user/assistant pairs of 5 tokens each, ending with a user turn. */
function conversation(turns: number, lastCache: typeof EPH | null = EPH): Body["messages"] {
  const messages: Body["messages"] = [];
  for (let i = 0; i < turns; i++) messages.push(user(5, null, `u${i}x`), assistant(5, `a${i}x`));
  messages.push(user(5, lastCache, `l${turns}x`));
  return messages;
}

/** An assistant turn and a user turn of `blocks - 1` text blocks: `blocks` positions of 5 tokens. */
function filler(blocks: number): Body["messages"] {
  const content = Array.from({ length: blocks - 1 }, (_, i) => ({
    type: "text" as const,
    text: textOfTokens(5, `f${i}`),
    ...(i === blocks - 2 ? { cache_control: EPH } : {}),
  }));
  return [assistant(5), { role: "user", content }];
}

const base = (extra: Partial<Body> = {}): Body => ({
  model: "m",
  tools: tools(),
  system: system(),
  messages: [user(10, EPH)],
  ...extra,
});

// tools = 1 (name "Read") + 20 (description) + 10 (`{"type":"object"}`: 7 punctuation, type 1, object 2).
const TOOLS = 1 + 20 + 10;
const T_TOOL = 1 + countTokens('{"properties":{},"type":"object"}');
const SYSTEM = 30;

const cases: Case[] = [
  {
    name: "no cache_control: nothing read or written",
    steps: [
      {
        body: base({ system: system(null), messages: [user(10)] }),
        expect: { input_tokens: TOOLS + SYSTEM + 10 },
      },
      {
        body: base({ system: system(null), messages: [user(10)] }),
        expect: {
          input_tokens: TOOLS + SYSTEM + 10,
          cache_read_input_tokens: 0,
          cache_creation_input_tokens: 0,
        },
      },
    ],
  },
  {
    name: "first request writes through its last breakpoint",
    steps: [
      {
        body: base(),
        expect: {
          input_tokens: 0,
          cache_creation_input_tokens: TOOLS + SYSTEM + 10,
          cache_read_input_tokens: 0,
        },
      },
    ],
  },
  {
    name: "identical second request reads everything",
    steps: [
      { body: base(), expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      {
        body: base(),
        expect: {
          input_tokens: 0,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: TOOLS + SYSTEM + 10,
        },
      },
    ],
  },
  {
    name: "tokens after the last breakpoint are input_tokens",
    steps: [
      {
        body: base({ messages: [user(10), assistant(4), user(6)] }),
        expect: { input_tokens: 20, cache_creation_input_tokens: TOOLS + SYSTEM },
      },
    ],
  },
  {
    name: "moving the breakpoint forward reads the earlier prefix (multi-turn pattern)",
    steps: [
      {
        body: base({ messages: conversation(1) }),
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 15 },
      },
      {
        body: base({
          messages: [...conversation(1, null).slice(0, 3), assistant(5, "a1x"), user(5, EPH, "z")],
        }),
        expect: {
          cache_read_input_tokens: TOOLS + SYSTEM + 15,
          cache_creation_input_tokens: 10,
          input_tokens: 0,
        },
      },
    ],
  },
  {
    name: "cache_control is not content: the same blocks without a marker on the old position still hit",
    steps: [
      {
        body: base({ messages: [user(10, EPH)] }),
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
      {
        body: base({ messages: [user(10), assistant(3), user(3, EPH, "new")] }),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM + 10, cache_creation_input_tokens: 6 },
      },
    ],
  },
  {
    name: "string content and a single text block are the same content",
    steps: [
      {
        body: base({
          system: system(null),
          messages: [{ role: "user", content: textOfTokens(10, "user") }, user(2, EPH, "q")],
        }),
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 12 },
      },
      {
        body: base({ system: system(null), messages: [user(10), user(2, EPH, "q")] }),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM + 12 },
      },
    ],
  },
  {
    name: "below the model's minimum nothing is cached and both counters are 0",
    steps: [
      {
        body: { model: "m", messages: [user(MIN - 1, EPH)] },
        expect: { input_tokens: MIN - 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
      {
        body: { model: "m", messages: [user(MIN - 1, EPH)] },
        expect: { input_tokens: MIN - 1, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
    ],
  },
  {
    name: "a short early breakpoint is skipped, a later long-enough one writes the whole prefix",
    steps: [
      {
        body: {
          model: "m",
          system: [{ type: "text", text: textOfTokens(3), cache_control: EPH }],
          messages: [user(20, EPH)],
        },
        expect: { cache_creation_input_tokens: 23, input_tokens: 0 },
      },
    ],
  },
  {
    name: "lookback: a breakpoint 19 positions after the written one still hits",
    steps: [
      {
        body: base({ system: system(null), messages: [user(5, EPH, "l0x")] }),
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 5 },
      },
      {
        // The breakpoint counts as the first of the 20 positions it looks back over.
        body: base({ system: system(null), messages: [user(5, null, "l0x"), ...filler(19)] }),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM + 5, cache_creation_input_tokens: 19 * 5 },
      },
    ],
  },
  {
    name: "lookback: a turn adding 20 blocks misses",
    steps: [
      {
        body: base({ system: system(null), messages: [user(5, EPH, "l0x")] }),
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 5 },
      },
      {
        body: base({ system: system(null), messages: [user(5, null, "l0x"), ...filler(20)] }),
        expect: { cache_read_input_tokens: 0, cache_creation_input_tokens: TOOLS + SYSTEM + 5 + 20 * 5 },
      },
    ],
  },
  {
    name: "changing a tool invalidates everything",
    steps: [
      { body: base({ tools: tools(true) }), expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      {
        body: base({ tools: tools(true, "efgh") }),
        expect: { cache_read_input_tokens: 0, cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
    ],
  },
  {
    name: "changing the system keeps the tools entry, misses system and messages",
    steps: [
      { body: base({ tools: tools(true) }), expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      {
        body: base({ tools: tools(true), system: system(EPH, "othr") }),
        expect: { cache_read_input_tokens: TOOLS, cache_creation_input_tokens: SYSTEM + 10 },
      },
    ],
  },
  {
    name: "changing tool_choice invalidates only the messages",
    steps: [
      {
        body: base({ tool_choice: { type: "auto" } }),
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
      {
        body: base({ tool_choice: { type: "any" } }),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM, cache_creation_input_tokens: 10 },
      },
    ],
  },
  {
    name: "changing the thinking config invalidates only the messages",
    steps: [
      { body: base(), expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      {
        body: base({ thinking: { type: "enabled", budget_tokens: 2000 } }),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM, cache_creation_input_tokens: 10 },
      },
    ],
  },
  {
    name: "a 5m entry expires after 5 minutes",
    steps: [
      { body: base(), at: 0, expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      {
        body: base(),
        at: 5 * MINUTE + 1,
        expect: { cache_read_input_tokens: 0, cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
    ],
  },
  {
    name: "a hit refreshes the TTL",
    steps: [
      { body: base(), at: 0, expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      { body: base(), at: 4 * MINUTE, expect: { cache_read_input_tokens: TOOLS + SYSTEM + 10 } },
      { body: base(), at: 8 * MINUTE, expect: { cache_read_input_tokens: TOOLS + SYSTEM + 10 } },
    ],
  },
  {
    name: "a 1h entry outlives 5 minutes",
    steps: [
      {
        body: base({ system: system(EPH_1H), messages: [user(10)] }),
        at: 0,
        expect: { write1h: TOOLS + SYSTEM },
      },
      {
        body: base({ system: system(EPH_1H), messages: [user(10)] }),
        at: 30 * MINUTE,
        expect: { cache_read_input_tokens: TOOLS + SYSTEM, input_tokens: 10 },
      },
      {
        body: base({ system: system(EPH_1H), messages: [user(10)] }),
        at: 91 * MINUTE,
        expect: { cache_read_input_tokens: 0, write1h: TOOLS + SYSTEM },
      },
    ],
  },
  {
    name: "mixed TTLs bill 1h up to the 1h breakpoint and 5m after it",
    steps: [
      {
        body: base({ system: system(EPH_1H) }),
        expect: { write1h: TOOLS + SYSTEM, write5m: 10, cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
    ],
  },
  {
    name: "simultaneous identical requests all miss",
    steps: [
      {
        body: base(),
        concurrentWithNext: true,
        expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
      {
        body: base(),
        expect: { cache_read_input_tokens: 0, cache_creation_input_tokens: TOOLS + SYSTEM + 10 },
      },
      {
        body: base(),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM + 10, cache_creation_input_tokens: 0 },
      },
    ],
  },
  {
    name: "automatic caching writes at the last block and moves forward by itself",
    steps: [
      {
        body: { model: "m", system: system(null), messages: [user(10)], cache_control: EPH },
        expect: { cache_creation_input_tokens: SYSTEM + 10, input_tokens: 0 },
      },
      {
        body: {
          model: "m",
          system: system(null),
          messages: [user(10), assistant(4), user(6, null, "next")],
          cache_control: EPH,
        },
        expect: { cache_read_input_tokens: SYSTEM + 10, cache_creation_input_tokens: 10 },
      },
    ],
  },
  {
    name: "entries are scoped to the API key",
    steps: [
      { body: base(), scope: "key-a", expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      { body: base(), scope: "key-b", expect: { cache_read_input_tokens: 0 } },
    ],
  },
  {
    name: "entries are scoped to the model",
    steps: [
      { body: base(), model: "m1", expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      { body: base(), model: "m2", expect: { cache_read_input_tokens: 0 } },
    ],
  },
  {
    name: "with system and message breakpoints, a changed last message still reads the system entry",
    steps: [
      { body: base(), expect: { cache_creation_input_tokens: TOOLS + SYSTEM + 10 } },
      {
        body: base({ messages: [user(12, EPH, "diff")] }),
        expect: { cache_read_input_tokens: TOOLS + SYSTEM, cache_creation_input_tokens: 12 },
      },
    ],
  },
  {
    name: "tool key order does not change the key",
    steps: [
      {
        body: base({
          tools: [{ input_schema: { type: "object", properties: {} }, name: "T", cache_control: EPH }],
        }),
        expect: { cache_creation_input_tokens: T_TOOL + SYSTEM + 10 },
      },
      {
        body: base({
          tools: [{ name: "T", input_schema: { properties: {}, type: "object" }, cache_control: EPH }],
        }),
        expect: { cache_read_input_tokens: T_TOOL + SYSTEM + 10 },
      },
    ],
  },
];

describe("R-D3: prompt-cache accounting, table-driven (api doc §5)", () => {
  it.each(cases)("$name", ({ steps }) => {
    let now = 0;
    const cache = new PromptCache(() => now);
    let pending: (() => void) | null = null;
    for (const [i, step] of steps.entries()) {
      now = step.at ?? now;
      const layout = layoutPrompt(step.body);
      const found = findBreakpoints(layout, step.body.cache_control ?? null);
      if (!found.ok) throw new Error(found.error.message);
      const account = cache.account({
        scope: step.scope ?? "key",
        arrival: cache.arrive(),
        modelId: step.model ?? "m",
        layout,
        breakpoints: found.breakpoints,
        minCacheableTokens: MIN,
      });
      pending?.();
      pending = null;
      if (step.concurrentWithNext) pending = account.commit;
      else account.commit();
      const { write5m, write1h, ...rest } = step.expect;
      const usage = account.usage;
      expect(usage, `step ${i}`).toMatchObject(rest);
      if (write5m !== undefined)
        expect(usage.cache_creation.ephemeral_5m_input_tokens, `step ${i} 5m`).toBe(write5m);
      if (write1h !== undefined)
        expect(usage.cache_creation.ephemeral_1h_input_tokens, `step ${i} 1h`).toBe(write1h);
      expect(usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens).toBe(
        layout.totalTokens,
      );
      expect(
        usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens,
      ).toBe(usage.cache_creation_input_tokens);
    }
  });
});
