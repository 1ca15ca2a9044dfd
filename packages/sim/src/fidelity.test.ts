import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import type { Simulator } from "./types.js";

/**
 * The fidelity suite (R-D1, R-D2, issue 29): each case is a request and what the API answers,
 * with the documentation page that says so, sent twice — through the official SDK
 * (`client.post`) and as raw HTTP. Rules come from the pages; the 400s' wording mostly does not
 * (the pages state rules, not messages), so a case checks the status, the error type and
 * `error.details.error_code`, and the message where a page or a client report gives it.
 */
const DOCS = "https://platform.claude.com/docs/en";
const PAGE = {
  deprecations: `${DOCS}/about-claude/model-deprecations`,
  effort: `${DOCS}/build-with-claude/effort`,
  perMessageEffort: `${DOCS}/build-with-claude/effort-per-message`,
  systemMessages: `${DOCS}/build-with-claude/mid-conversation-system-messages`,
  adaptive: `${DOCS}/build-with-claude/adaptive-thinking`,
  extended: `${DOCS}/build-with-claude/extended-thinking`,
  threads: `${DOCS}/build-with-claude/message-threads`,
  opus5: `${DOCS}/models/opus-5/overview`,
  errors: `${DOCS}/api/errors`,
} as const;

type Expect =
  | { status: 200; thinkingText?: "empty" | "text" }
  | { status: number; type: string; message?: string | RegExp; errorCode?: string };

interface Case {
  page: string;
  title: string;
  body: Record<string, unknown>;
  betas?: readonly string[];
  /** `anthropic-version` (the SDK's own, 2026-10-21, refuses sampling parameters). */
  version?: string;
  expect: Expect;
}

const user = (text: string) => ({ role: "user", content: text });
const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
const system = (text: string) => ({ role: "system", content: text });
const base = (model: string, extra: Record<string, unknown> = {}) => ({
  model,
  max_tokens: 200,
  messages: [user("hello")],
  ...extra,
});
const ok: Expect = { status: 200 };
const bad = (message?: string | RegExp, errorCode?: string): Expect => ({
  status: 400,
  type: "invalid_request_error",
  ...(message === undefined ? {} : { message }),
  ...(errorCode === undefined ? {} : { errorCode }),
});

const LEVELS = ["low", "medium", "high", "xhigh", "max"] as const;
/** Effort levels per model as the effort page lists them. */
const EFFORT: readonly [string, readonly string[]][] = [
  ["claude-haiku-4-5", []],
  ["claude-opus-4-5", ["low", "medium", "high"]],
  ["claude-opus-4-6", ["low", "medium", "high", "max"]],
  ["claude-sonnet-4-6", ["low", "medium", "high", "max"]],
  ["claude-opus-4-7", LEVELS],
  ["claude-opus-4-8", LEVELS],
  ["claude-opus-5", LEVELS],
  ["claude-opus-5-5", LEVELS],
];

const CASES: Case[] = [
  // Retired models fail (model deprecations page: "Requests to retired models will fail").
  ...["claude-opus-4-1-20250805", "claude-opus-4-1", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"].map(
    (model): Case => ({
      page: PAGE.deprecations,
      title: `retired ${model} → 404`,
      body: base(model),
      expect: { status: 404, type: "not_found_error", message: `model: ${model}` },
    }),
  ),
  {
    page: PAGE.deprecations,
    title: "deprecated (not retired) Opus 4.5 still answers",
    body: base("claude-opus-4-5"),
    expect: ok,
  },
  // Effort: which models take it, at which levels.
  ...EFFORT.flatMap(([model, levels]) =>
    LEVELS.map(
      (level): Case => ({
        page: PAGE.effort,
        title: `${model} effort ${level} → ${levels.includes(level) ? "accepted" : "refused"}`,
        body: base(model, { output_config: { effort: level } }),
        expect: levels.includes(level) ? ok : bad(/output_config\.effort/),
      }),
    ),
  ),
  // Opus 5 refuses xhigh and max with thinking disabled.
  ...(["xhigh", "max"] as const).map(
    (level): Case => ({
      page: PAGE.opus5,
      title: `Opus 5 thinking disabled at ${level} → refused`,
      body: base("claude-opus-5", { thinking: { type: "disabled" }, output_config: { effort: level } }),
      expect: bad(/requires thinking/),
    }),
  ),
  {
    page: PAGE.opus5,
    title: "Opus 5 thinking disabled at high → accepted",
    body: base("claude-opus-5", { thinking: { type: "disabled" }, output_config: { effort: "high" } }),
    expect: ok,
  },
  // Thinking types per model.
  {
    page: PAGE.adaptive,
    title: "Opus 4.7 refuses thinking.enabled",
    body: base("claude-opus-4-7", { thinking: { type: "enabled", budget_tokens: 1024 } }),
    expect: bad(
      '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and "output_config.effort" to control thinking behavior.',
    ),
  },
  {
    page: PAGE.adaptive,
    title: "Haiku 4.5 refuses adaptive thinking",
    body: base("claude-haiku-4-5", { thinking: { type: "adaptive" } }),
    expect: bad("adaptive thinking is not supported on this model"),
  },
  {
    page: PAGE.adaptive,
    title: "Fable 5.1 refuses thinking disabled (always on)",
    body: base("claude-fable-5-1", { thinking: { type: "disabled" } }),
    expect: bad(/thinking\.type\.disabled/),
  },
  // Display defaults: Opus 4.7 and later omit the thinking text; 4.6 summarizes.
  ...(
    [
      ["claude-opus-4-7", "empty"],
      ["claude-opus-5-5", "empty"],
      ["claude-fable-5", "empty"],
      ["claude-opus-4-6", "text"],
      ["claude-sonnet-4-6", "text"],
    ] as const
  ).map(
    ([model, text]): Case => ({
      page: PAGE.adaptive,
      title: `${model} adaptive thinking without display → thinking ${text}`,
      body: base(model, { thinking: { type: "adaptive" } }),
      expect: { status: 200, thinkingText: text },
    }),
  ),
  {
    page: PAGE.adaptive,
    title: "display summarized on Opus 5.5 → thinking text",
    body: base("claude-opus-5-5", { thinking: { type: "adaptive", display: "summarized" } }),
    expect: { status: 200, thinkingText: "text" },
  },
  {
    page: PAGE.adaptive,
    title: "display updates with its beta on Opus 5.5 (Claude Code sends it)",
    body: base("claude-opus-5-5", { thinking: { type: "adaptive", display: "updates" } }),
    betas: ["thinking-display-updates-2026-08-18"],
    expect: { status: 200, thinkingText: "empty" },
  },
  {
    page: PAGE.adaptive,
    title: "display updates without its beta → refused",
    body: base("claude-opus-5-5", { thinking: { type: "adaptive", display: "updates" } }),
    expect: bad(/display/),
  },
  {
    page: PAGE.adaptive,
    title: "display updates on Opus 4.7 → refused",
    body: base("claude-opus-4-7", { thinking: { type: "adaptive", display: "updates" } }),
    betas: ["thinking-display-updates-2026-08-18"],
    expect: bad(/updates/),
  },
  // Sampling with thinking (2023-06-01; extended thinking page, feature compatibility).
  {
    page: PAGE.extended,
    title: "top_k with thinking → refused",
    version: "2023-06-01",
    body: base("claude-opus-4-6", { thinking: { type: "adaptive" }, top_k: 5 }),
    expect: bad(/top_k/),
  },
  {
    page: PAGE.extended,
    title: "top_p 0.9 with thinking → refused",
    version: "2023-06-01",
    body: base("claude-opus-4-6", { thinking: { type: "adaptive" }, top_p: 0.9 }),
    expect: bad(/top_p/),
  },
  {
    page: PAGE.extended,
    title: "top_p 0.96 with thinking → accepted",
    version: "2023-06-01",
    body: base("claude-opus-4-6", { thinking: { type: "adaptive" }, top_p: 0.96 }),
    expect: ok,
  },
  {
    page: PAGE.extended,
    title: "top_k without thinking on Opus 4.6 → accepted",
    version: "2023-06-01",
    body: base("claude-opus-4-6", { top_k: 5 }),
    expect: ok,
  },
  // Mid-conversation system messages: Opus 4.8 and later, after a user turn.
  ...["claude-opus-4-6", "claude-sonnet-4-6", "claude-opus-4-7", "claude-haiku-4-5"].map(
    (model): Case => ({
      page: PAGE.systemMessages,
      title: `${model} refuses a system message`,
      body: base(model, { messages: [user("q"), system("be brief")] }),
      expect: bad("messages.1.role: Input should be 'user' or 'assistant'"),
    }),
  ),
  ...["claude-opus-4-8", "claude-opus-5", "claude-opus-5-5", "claude-sonnet-5-5", "claude-fable-5-1"].map(
    (model): Case => ({
      page: PAGE.systemMessages,
      title: `${model} accepts a system message right after a user turn`,
      body: base(model, { messages: [user("q"), system("be brief")] }),
      expect: ok,
    }),
  ),
  {
    page: PAGE.systemMessages,
    title: "a system message first → refused",
    body: base("claude-opus-4-8", { messages: [system("x"), user("q")] }),
    expect: bad(/must immediately follow a user turn/),
  },
  {
    page: PAGE.systemMessages,
    title: "a system message after an assistant turn → refused",
    body: base("claude-opus-4-8", { messages: [user("q"), assistant("a"), system("x"), user("q2")] }),
    expect: bad(/must immediately follow a user turn/),
  },
  {
    page: PAGE.systemMessages,
    title: "two system messages in a row → refused",
    body: base("claude-opus-4-8", { messages: [user("q"), system("x"), system("y")] }),
    expect: bad(/followed by an assistant turn/),
  },
  {
    page: PAGE.systemMessages,
    title: "a system message followed by an assistant turn → accepted",
    body: base("claude-opus-4-8", { messages: [user("q"), system("x"), assistant("a"), user("q2")] }),
    expect: ok,
  },
  // Per-message effort (beta): an effort-only system message anywhere after what was sent.
  {
    page: PAGE.perMessageEffort,
    title: "effort-only system message with the beta (Claude Code's per-turn effort)",
    body: base("claude-fable-5-1", {
      output_config: { effort: "high" },
      messages: [
        user("q"),
        assistant("a"),
        { role: "system", content: [], output_config: { effort: "low" } },
        user("q2"),
      ],
    }),
    betas: ["mid-conversation-output-config-2026-07-01"],
    expect: ok,
  },
  {
    page: PAGE.perMessageEffort,
    title: "effort-only system message on Opus 4.6 (takes effort) with the beta",
    body: base("claude-opus-4-6", {
      messages: [
        user("q"),
        assistant("a"),
        { role: "system", content: [], output_config: { effort: "low" } },
        user("q2"),
      ],
    }),
    betas: ["mid-conversation-output-config-2026-07-01"],
    expect: ok,
  },
  {
    page: PAGE.perMessageEffort,
    title: "output_config on a message without the beta → refused",
    body: base("claude-fable-5-1", {
      messages: [user("q"), { role: "system", content: [], output_config: { effort: "low" } }],
    }),
    expect: bad("messages.1.output_config: Extra inputs are not permitted"),
  },
  {
    page: PAGE.perMessageEffort,
    title: "per-message effort at a level the model lacks → refused",
    body: base("claude-opus-4-6", {
      messages: [user("q"), { role: "system", content: [], output_config: { effort: "xhigh" } }],
    }),
    betas: ["mid-conversation-output-config-2026-07-01"],
    expect: bad(/messages\.1\.output_config\.effort/),
  },
  // Message threads: refusals with their error codes.
  {
    page: PAGE.threads,
    title: "thread without its beta → refused",
    body: base("claude-opus-5-5", { thread: { type: "create" } }),
    expect: bad("thread: Extra inputs are not permitted"),
  },
  {
    page: PAGE.threads,
    title: "continuing an unknown thread → 404 thread_not_found (the client replays)",
    body: base("claude-opus-5-5", { thread: { type: "continue", previous_message_id: "msg_gone" } }),
    betas: ["message-threads-2026-08-12"],
    expect: { status: 404, type: "not_found_error", errorCode: "thread_not_found" },
  },
  {
    page: PAGE.threads,
    title: "a thread with 4 cache_control blocks → thread_unsupported_request",
    body: base("claude-opus-5-5", {
      thread: { type: "create" },
      system: [1, 2, 3, 4].map((i) => ({
        type: "text",
        text: `part ${i}`,
        cache_control: { type: "ephemeral" },
      })),
    }),
    betas: ["message-threads-2026-08-12"],
    expect: bad(/a maximum of 3 blocks with cache_control/, "thread_unsupported_request"),
  },
  {
    page: PAGE.threads,
    title: "creating a thread with the beta → accepted",
    body: base("claude-opus-5-5", { thread: { type: "create" } }),
    betas: ["message-threads-2026-08-12"],
    expect: ok,
  },
];

let sim: Simulator;
let client: Anthropic;
beforeAll(async () => {
  sim = await startSimulator();
  client = new Anthropic({ apiKey: "k", baseURL: sim.url, maxRetries: 0 });
});
afterAll(async () => {
  await sim.close();
});

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

async function viaHttp(c: Case): Promise<Answer> {
  const response = await fetch(`${sim.url}/v1/messages`, {
    method: "POST",
    headers: {
      "x-api-key": "k",
      "anthropic-version": c.version ?? "2023-06-01",
      "content-type": "application/json",
      ...(c.betas ? { "anthropic-beta": c.betas.join(",") } : {}),
    },
    body: JSON.stringify(c.body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function viaSdk(c: Case): Promise<Answer> {
  try {
    const headers = {
      ...(c.betas ? { "anthropic-beta": c.betas.join(",") } : {}),
      ...(c.version ? { "anthropic-version": c.version } : {}),
    };
    const body = await client.post<Record<string, unknown>>("/v1/messages", { body: c.body, headers });
    return { status: 200, body };
  } catch (error) {
    if (!(error instanceof Anthropic.APIError) || error.status === undefined) throw error;
    return { status: error.status, body: error.error as Record<string, unknown> };
  }
}

function check(answer: Answer, expected: Expect): void {
  expect(answer.status).toBe(expected.status);
  if (expected.status === 200) {
    const content = answer.body.content as { type: string; thinking?: string }[];
    if (!("thinkingText" in expected) || expected.thinkingText === undefined) return;
    const thinking = content.find((b) => b.type === "thinking");
    if (expected.thinkingText === "empty") expect(thinking?.thinking).toBe("");
    else expect(thinking?.thinking?.length ?? 0).toBeGreaterThan(0);
    return;
  }
  if (!("type" in expected)) return;
  const error = answer.body.error as { type: string; message: string; details?: { error_code?: string } };
  expect(answer.body.type).toBe("error");
  expect(error.type).toBe(expected.type);
  if (typeof expected.message === "string") expect(error.message).toBe(expected.message);
  else if (expected.message) expect(error.message).toMatch(expected.message);
  expect(error.details?.error_code).toBe(expected.errorCode);
}

describe("R-D2 fidelity: requests and what the API answers, each case citing its page", () => {
  it("has at least 80 cases", () => {
    expect(CASES.length).toBeGreaterThanOrEqual(80);
  });
  describe.each(CASES.map((c) => [`${c.title} (${c.page})`, c] as const))("%s", (_title, c) => {
    it("R-D2: through the official SDK", async () => check(await viaSdk(c), c.expect));
    it("R-D2: as raw HTTP", async () => check(await viaHttp(c), c.expect));
  });
});
