import { assistant, bad, base, type Case, ok, PAGE, user } from "./case.js";

/** What Claude Code 2.1.333's first request carries: its environment as a system message with per-turn effort. */
const environment = (outputConfig: Record<string, unknown>) => ({
  role: "system",
  content: "<env>Working directory: /work</env>",
  output_config: outputConfig,
});
const PER_TURN = ["per-turn-control-2026-07-01"];

/** Request rules beyond the model table (R-D2): per-turn controls, schemas, tools, images. */
export const REQUEST_RULE_CASES: Case[] = [
  // Per-turn effort on a system message (per-message effort page; SDK 1.14's BetaSystemMessageParam).
  {
    page: PAGE.perMessageEffort,
    title:
      "Claude Code's first request: a system message with content and output_config (per-turn-control beta)",
    body: base("claude-opus-5-5", { messages: [user("q"), environment({ effort: "high" })] }),
    betas: PER_TURN,
    expect: ok,
  },
  {
    page: PAGE.perMessageEffort,
    title: "an effort-only system message under Claude Code's per-turn-control beta",
    body: base("claude-opus-5-5", {
      messages: [
        user("q"),
        assistant("a"),
        { role: "system", content: [], output_config: { effort: "low" } },
        user("q2"),
      ],
    }),
    betas: PER_TURN,
    expect: ok,
  },
  {
    page: PAGE.perMessageEffort,
    title: "an empty output_config on a system message with content → accepted",
    body: base("claude-opus-5-5", { messages: [user("q"), environment({})] }),
    betas: PER_TURN,
    expect: ok,
  },
  {
    page: PAGE.perMessageEffort,
    title: "a system message with neither content nor an output_config field → refused",
    body: base("claude-opus-5-5", {
      messages: [user("q"), { role: "system", content: [], output_config: {} }],
    }),
    betas: PER_TURN,
    expect: bad(/messages\.1/),
  },
  {
    page: PAGE.systemMessages,
    title: "a system message with content and output_config on Opus 4.7 (no system messages) → refused",
    body: base("claude-opus-4-7", { messages: [user("q"), environment({ effort: "high" })] }),
    betas: PER_TURN,
    expect: bad(
      'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
    ),
  },
  {
    page: PAGE.systemMessages,
    title: "a system message with content and output_config follows the placement rules",
    body: base("claude-opus-5-5", {
      messages: [user("q"), assistant("a"), environment({ effort: "high" }), user("q2")],
    }),
    betas: PER_TURN,
    expect: bad(/must immediately follow a user turn/),
  },
  {
    page: PAGE.perMessageEffort,
    title: "output_config on a user message → refused",
    body: base("claude-opus-5-5", {
      messages: [{ role: "user", content: "q", output_config: { effort: "low" } }],
    }),
    betas: PER_TURN,
    expect: bad("messages.0.output_config: Extra inputs are not permitted"),
  },
  {
    page: PAGE.systemMessages,
    title: "clear_at on a system message with its beta → accepted",
    body: base("claude-opus-5-5", {
      messages: [user("q"), { role: "system", content: "only for this turn", clear_at: "next_user_message" }],
    }),
    betas: ["mid-conversation-system-clear-at-2026-08-21"],
    expect: ok,
  },
  {
    page: PAGE.systemMessages,
    title: "clear_at without its beta → refused",
    body: base("claude-opus-5-5", {
      messages: [user("q"), { role: "system", content: "only for this turn", clear_at: "next_user_message" }],
    }),
    expect: bad("messages.1.clear_at: Extra inputs are not permitted"),
  },
];
