import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, it } from "vitest";
import { findBreakpoints } from "./cache-breakpoints.js";
import { type CacheUsage, PromptCache } from "./prompt-cache.js";
import { layoutPrompt } from "./prompt-layout.js";
import { startSimulator } from "./server.js";
import { assistant, type Body, EPH, system, tools, user } from "./test-support/cache-bodies.js";
import { textOfTokens } from "./testing/index.js";

/**
 * R-D3: the cache rules an earlier version got wrong, one table row per rule. Each row is
 * a sequence of requests; `arrivesBefore` makes a request arrive before the previous one's
 * response started (both in flight at once).
 */
const PNG = Buffer.from("89504e470d0a1a0a0000000d49484452", "hex").toString("base64");
const image = {
  type: "image" as const,
  source: { type: "base64" as const, media_type: "image/png" as const, data: PNG },
};
const IMAGE_TOKENS = 1500;

interface Step {
  body: Body;
  arrivesBefore?: "previous response starts";
  expect: Partial<CacheUsage>;
}

const deferred = {
  name: "Search",
  description: "later",
  input_schema: { type: "object" as const },
  defer_loading: true,
};
const turnTwo = (extra: Body["messages"] = []): Body["messages"] => [
  // A breakpoint at the end of turn one too: without the image rule its entry would be read.
  user(10, EPH, "u1xx"),
  assistant(10),
  ...extra,
  user(10, EPH, "u2xx"),
];

/** Tools + system + one 10-token user turn: 71 tokens, breakpoints on the system and the turn. */
const short = (extraTools: NonNullable<Body["tools"]> = []): Body => ({
  model: "m",
  tools: [...(tools() ?? []), ...extraTools],
  system: system(),
  messages: [user(10, EPH)],
});

/** Turn two, with a turn in between that adds an image. */
const withImage: Body = {
  model: "m",
  tools: tools(),
  system: system(),
  messages: turnTwo([
    { role: "user", content: [image, { type: "text", text: "see" }] },
    assistant(5, "seen"),
  ]),
};

const RULES: { name: string; steps: Step[] }[] = [
  {
    name: "requests in flight together all miss: an entry is readable only by requests that arrive after the response that wrote it started",
    steps: [
      {
        body: short(),
        expect: { cache_read_input_tokens: 0, cache_creation_input_tokens: 71 },
      },
      {
        body: short(),
        arrivesBefore: "previous response starts",
        expect: { cache_read_input_tokens: 0, cache_creation_input_tokens: 71 },
      },
      {
        body: short(),
        expect: { cache_read_input_tokens: 71, cache_creation_input_tokens: 0 },
      },
    ],
  },
  {
    name: "a defer_loading tool is not part of the prefix: adding one keeps the whole cache",
    steps: [
      {
        body: short(),
        expect: { cache_creation_input_tokens: 71 },
      },
      {
        body: short([deferred]),
        expect: { cache_read_input_tokens: 71, cache_creation_input_tokens: 0 },
      },
    ],
  },
  {
    name: "a tool that is not deferred changes the prefix: everything is written again",
    steps: [
      {
        body: short(),
        expect: { cache_creation_input_tokens: 71 },
      },
      {
        body: short([{ ...deferred, defer_loading: false }]),
        expect: { cache_read_input_tokens: 0 },
      },
    ],
  },
  {
    name: "an image added in a later turn invalidates the messages cache (tools + system are still read); the same images next turn read it",
    steps: [
      {
        body: { model: "m", tools: tools(), system: system(), messages: turnTwo() },
        expect: { cache_creation_input_tokens: 91 },
      },
      {
        body: withImage,
        // Tools (31) + system (30) are read; every message position is written again.
        expect: { cache_read_input_tokens: 61, cache_creation_input_tokens: 30 + IMAGE_TOKENS + 1 + 5 },
      },
      {
        body: withImage,
        expect: { cache_read_input_tokens: 91 + IMAGE_TOKENS + 1 + 5, cache_creation_input_tokens: 0 },
      },
    ],
  },
  // R-D3: what invalidates which level (prompt caching page, "What invalidates the cache").
  {
    name: "R-D3: turning citations on invalidates the system and messages caches; the tools' cache is read",
    steps: [
      // Tools 31, system 30, document 20, "cite" 1.
      { body: { ...withDocument(false), tools: tools(true) }, expect: { cache_creation_input_tokens: 82 } },
      {
        body: { ...withDocument(true), tools: tools(true) },
        expect: { cache_read_input_tokens: 31, cache_creation_input_tokens: 51 },
      },
    ],
  },
  {
    name: "R-D3: declaring web search invalidates the system and messages caches (a tool change: the tools' cache too)",
    steps: [
      { body: short(), expect: { cache_creation_input_tokens: 71 } },
      {
        body: short([{ type: "web_search_20250305", name: "web_search" } as never]),
        expect: { cache_read_input_tokens: 0 },
      },
    ],
  },
  {
    name: "R-D3: a top-level effort change invalidates the messages cache; tools and system are read",
    steps: [
      {
        body: { ...short(), output_config: { effort: "high" } } as Body,
        expect: { cache_creation_input_tokens: 71 },
      },
      {
        body: { ...short(), output_config: { effort: "low" } } as Body,
        expect: { cache_read_input_tokens: 61, cache_creation_input_tokens: 10 },
      },
    ],
  },
];

/** Tools (with a breakpoint), system, and a plain-text document turn, citations on or off. */
function withDocument(citations: boolean): Body {
  return {
    model: "m",
    system: system(),
    messages: [
      {
        role: "user",
        content: [
          {
            type: "document",
            source: { type: "text", media_type: "text/plain", data: textOfTokens(20, "docx") },
            citations: { enabled: citations },
          },
          { type: "text", text: "cite", cache_control: EPH },
        ],
      },
    ],
  };
}

describe("R-D3: cache rules (api doc §5), table-driven", () => {
  it.each(RULES)("$name", ({ steps }) => {
    const cache = new PromptCache(() => 0);
    let commitPrevious = () => {};
    for (const [i, step] of steps.entries()) {
      let arrival: number;
      if (step.arrivesBefore) {
        arrival = cache.arrive();
        commitPrevious();
      } else {
        commitPrevious();
        arrival = cache.arrive();
      }
      const layout = layoutPrompt(step.body);
      const found = findBreakpoints(layout, null);
      if (!found.ok) throw new Error(found.error.message);
      const account = cache.account({
        scope: "key",
        arrival,
        modelId: "m",
        layout,
        breakpoints: found.breakpoints,
        minCacheableTokens: 10,
      });
      expect(account.usage, `step ${i}`).toMatchObject(step.expect);
      commitPrevious = account.commit;
    }
  });

  it.each([
    [2, "JSON"],
    [6, "JSON"],
    [6, "SSE"],
  ])(
    "over HTTP with latency off: %i identical requests sent at once (%s) all write, the next one reads",
    async (count, format) => {
      const sim = await startSimulator();
      try {
        const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
        const request = {
          model: "claude-sonnet-4-6",
          max_tokens: 50,
          system: [{ type: "text" as const, text: textOfTokens(1200, "wxyz"), cache_control: EPH }],
          messages: [{ role: "user" as const, content: "hello" }],
        };
        const send = () =>
          format === "SSE" ? client.messages.stream(request).finalMessage() : client.messages.create(request);
        // An HTTP client sends them one after another within milliseconds; a response that
        // started at once would be read by the later ones (MIN_WRITE_FIRST_BYTE_MS).
        const all = await Promise.all(Array.from({ length: count }, send));
        expect(
          all.map((m) => [m.usage.cache_read_input_tokens, m.usage.cache_creation_input_tokens]),
        ).toEqual(all.map(() => [0, 1200]));
        const later = await client.messages.create(request);
        expect(later.usage.cache_read_input_tokens).toBe(1200);
      } finally {
        await sim.close();
      }
    },
  );

  it.each([
    ["claude-opus-5", 600, 600],
    ["claude-sonnet-5", 600, 0],
    ["claude-opus-5", 400, 0],
  ])(
    "minimum cacheable length: %s with a %i-token prefix writes %i (Opus 5: 512 per its announcement)",
    async (model, size, written) => {
      const sim = await startSimulator();
      try {
        const client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
        // The Opus 5 tokenizer counts 1.3× the simulator's tokens: size the text in model tokens.
        const factor = model === "claude-opus-5" ? 1.3 : 1;
        const message = await client.messages.create({
          model,
          max_tokens: 50,
          system: [
            { type: "text", text: textOfTokens(Math.round(size / factor), "wxyz"), cache_control: EPH },
          ],
          messages: [{ role: "user", content: "hello" }],
        });
        expect((message.usage.cache_creation_input_tokens ?? 0) > 0).toBe(written > 0);
      } finally {
        await sim.close();
      }
    },
  );
});
