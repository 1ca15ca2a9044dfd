import { assistant, bad, base, type Case, ok, PAGE, system, user } from "./case.js";

/** Per-model rules of the model table (R-D1, R-D2): retirement, effort, thinking, system messages, threads. */
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

export const MODEL_RULE_CASES: Case[] = [
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
        expect: levels.includes(level)
          ? ok
          : levels.length === 0
            ? bad("This model does not support the effort parameter.")
            : bad(/output_config\.effort/),
      }),
    ),
  ),
  // Opus 5 refuses xhigh and max with thinking disabled.
  ...(["xhigh", "max"] as const).map(
    (level): Case => ({
      page: PAGE.opus5,
      title: `Opus 5 thinking disabled at ${level} → refused`,
      body: base("claude-opus-5", { thinking: { type: "disabled" }, output_config: { effort: level } }),
      expect: bad(
        `output_config.effort '${level}' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking.`,
      ),
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
      expect: bad(
        'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
      ),
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
    expect: bad(
      "messages.0: use the top-level 'system' parameter for the initial system prompt; the directive-only form (content: [] with output_config) is accepted at any position",
    ),
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
    expect: bad(/^messages\.1: role 'system' must precede an 'assistant' message or end the array/),
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
