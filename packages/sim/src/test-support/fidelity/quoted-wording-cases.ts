import { assistant, bad, base, type Case, ok, PAGE, system, user } from "./case.js";

/**
 * Refusals whose exact wording no page states but a real API error body quoted in public does
 * (R-D2): each case names its page for the rule and its `source` for the words.
 */
const PROBE =
  "https://github.com/aakshintala/fiber/blob/b06675c402a3286e528740b4b807d846ecf3cd86/research/anthropic-messages-probe/README.md";
const MISMATCH_REPORT = "https://github.com/vybestack/llxprt-code/issues/2130";
/** Live measurement of sampling parameters on the models that dropped them (§2). */
const SAMPLING =
  "https://github.com/kangwoo/aimon-core/blob/320fbbc0aacaf6c0928439969418d97ac9ea6bf4/docs/design/llm/anthropic-sampling-capabilities.md";

/** A parity suite's direct-API observations (system-message placement, 2026-08-31). */
const PARITY =
  "https://github.com/kangminlee-maker/local-OAuth-CLI-API-adapter/blob/87ac1c5ed83001bee363ff8b17051fa4beaf3cc3/test/anthropic-messages-validation-parity.test.mjs";
const DIRECTIVE = "; the directive-only form (content: [] with output_config) is accepted at any position";

const EFFORT_REPORT = "https://github.com/griffinmartin/opencode-claude-auth/issues/125";
const UNREADABLE_IMAGE_REPORT = "https://github.com/anthropics/claude-code/issues/56511";

const MCP_REPORT = "https://github.com/anthropics/anthropic-sdk-csharp/pull/267";
const CONTEXT_MANAGEMENT_REPORT = "https://github.com/anthropics/claude-code/issues/14135";

const EFFORT_WITHOUT_THINKING_REPORT = "https://github.com/anthropics/claude-code/issues/81084";

const SCHEMA_KEYWORD_REPORT = "https://github.com/agentjido/req_llm/issues/302";
const SCHEMA_KEYWORDS_REPORT = "https://github.com/CherryHQ/cherry-studio/issues/18037";

/** A 1×1 PNG: its bytes say PNG whatever the block declares. */
const PNG_1X1 =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const weather = { name: "get_weather", input_schema: { type: "object", properties: {} } };

export const QUOTED_WORDING_CASES: Case[] = [
  {
    page: PAGE.errors,
    source: PROBE,
    title: "tool_choice any with no tools → the API's sentence",
    body: base("claude-sonnet-5-5", { tool_choice: { type: "any" } }),
    expect: bad("tool_choice.any may only be specified while providing tools"),
  },
  {
    page: PAGE.errors,
    source: PROBE,
    title: "tool_choice naming a tool that is not declared → the API's sentence",
    body: base("claude-sonnet-5-5", {
      tools: [weather],
      tool_choice: { type: "tool", name: "never_declared" },
    }),
    expect: bad("Tool 'never_declared' not found in provided tools"),
  },
  {
    page: PAGE.errors,
    source: PROBE,
    title: "tool_choice naming a tool with no tools at all → the same sentence",
    body: base("claude-sonnet-5-5", { tool_choice: { type: "tool", name: "get_weather" } }),
    expect: bad("Tool 'get_weather' not found in provided tools"),
  },
  {
    page: PAGE.vision,
    source: MISMATCH_REPORT,
    title: "PNG bytes declared as image/jpeg → refused at the block's source.base64",
    body: base("claude-sonnet-5-5", {
      messages: [
        {
          role: "user",
          content: [{ type: "image", source: { type: "base64", media_type: "image/jpeg", data: PNG_1X1 } }],
        },
      ],
    }),
    expect: bad(
      "messages.0.content.0.image.source.base64: The image was specified using the image/jpeg media type, but the image appears to be a image/png image",
    ),
  },
  {
    page: PAGE.vision,
    source: MISMATCH_REPORT,
    title: "the mismatch inside a tool_result names the nested image's path",
    body: base("claude-sonnet-5-5", {
      tools: [weather],
      messages: [
        user("q"),
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: {} }],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [
                { type: "text", text: "shot" },
                { type: "image", source: { type: "base64", media_type: "image/jpeg", data: PNG_1X1 } },
              ],
            },
          ],
        },
      ],
    }),
    expect: bad(
      "messages.2.content.0.tool_result.content.1.image.source.base64: The image was specified using the image/jpeg media type, but the image appears to be a image/png image",
    ),
  },
  // Sampling on models after Opus 4.6 (2023-06-01: the SDK's own version refuses sampling outright).
  {
    page: PAGE.opus5,
    source: SAMPLING,
    title: "temperature 0.5 on Opus 4.7 → the API's sentence",
    version: "2023-06-01",
    body: base("claude-opus-4-7", { temperature: 0.5 }),
    expect: bad("`temperature` is deprecated for this model."),
  },
  {
    page: PAGE.opus5,
    source: SAMPLING,
    title: "top_p 0.9 on Opus 5 → the API's sentence",
    version: "2023-06-01",
    body: base("claude-opus-5", { top_p: 0.9 }),
    expect: bad("`top_p` is deprecated for this model."),
  },
  {
    page: PAGE.migration,
    source: SAMPLING,
    title: "top_p 1.0 on Opus 5 → refused too (no default to match; measured by presence)",
    version: "2023-06-01",
    body: base("claude-opus-5", { top_p: 1 }),
    expect: bad("`top_p` is deprecated for this model."),
  },
  {
    page: PAGE.migration,
    source: SAMPLING,
    title: "temperature at its default 1.0 on Opus 4.7 → accepted",
    version: "2023-06-01",
    body: base("claude-opus-4-7", { temperature: 1 }),
    expect: ok,
  },
  {
    page: PAGE.opus5,
    source: SAMPLING,
    title: "top_k on Sonnet 5 → the API's sentence",
    version: "2023-06-01",
    body: base("claude-sonnet-5", { top_k: 5 }),
    expect: bad("`top_k` is deprecated for this model."),
  },
  // Type and range faults in the words a direct-API parity suite measured (claude-sonnet-5).
  {
    page: PAGE.errors,
    source: PARITY,
    title: "temperature above its range → `range: 0..1`",
    body: base("claude-sonnet-5", { temperature: 2 }),
    expect: bad("temperature: range: 0..1"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "top_p above its range → `range: 0..1`",
    body: base("claude-sonnet-5", { top_p: 1.5 }),
    expect: bad("top_p: range: 0..1"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "max_tokens below zero → the API's bound sentence",
    body: base("claude-sonnet-5", { max_tokens: -1 }),
    expect: bad("max_tokens: must be greater than or equal to 0"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "messages as a string → `a valid array`",
    body: base("claude-sonnet-5", { messages: "x" }),
    expect: bad("messages: Input should be a valid array"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "content as an integer → `a valid array`",
    body: base("claude-sonnet-5", { messages: [{ role: "user", content: 7 }] }),
    expect: bad("messages.0.content: Input should be a valid array"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a content block that is not an object → `an object`",
    body: base("claude-sonnet-5", { messages: [{ role: "user", content: [7] }] }),
    expect: bad("messages.0.content.0: Input should be an object"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "tool_choice as an integer → `an object`",
    body: base("claude-sonnet-5", { tool_choice: 7 }),
    expect: bad("tool_choice: Input should be an object"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a tools member that is not an object → `an object`",
    body: base("claude-sonnet-5", { tools: [7] }),
    expect: bad("tools.0: Input should be an object"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a system member that is not an object → does not match the expected shape",
    body: base("claude-sonnet-5", { system: [7] }),
    expect: bad("system.0: Input does not match the expected shape."),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "metadata as a string → does not match the expected shape",
    body: base("claude-sonnet-5", { metadata: "x" }),
    expect: bad("metadata: Input does not match the expected shape."),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "output_config as a string → does not match the expected shape",
    body: base("claude-sonnet-5", { output_config: "x" }),
    expect: bad("output_config: Input does not match the expected shape."),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "output_config null → does not match the expected shape (null is not leaving it out)",
    body: base("claude-sonnet-5", { output_config: null }),
    expect: bad("output_config: Input does not match the expected shape."),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "an empty final assistant turn on a model without prefill → accepted (it prefills nothing)",
    body: base("claude-sonnet-5", { messages: [user("a"), { role: "assistant", content: [] }] }),
    expect: ok,
  },
  // Message shapes in the words a direct-API parity suite measured (claude-sonnet-5).
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "a system message with no blocks → the API's sentence",
    body: base("claude-sonnet-5", { messages: [user("a"), { role: "system", content: [] }] }),
    expect: bad("messages.1: system content must contain at least one block"),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "a whitespace-only system message → the API's sentence",
    body: base("claude-sonnet-5", { messages: [user("a"), system("  ")] }),
    expect: bad("messages.1: system text blocks must contain non-whitespace text"),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "an image in a system message → the API's sentence",
    body: base("claude-sonnet-5", {
      messages: [
        user("a"),
        {
          role: "system",
          content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: PNG_1X1 } }],
        },
      ],
    }),
    expect: bad("messages.1: role 'system' supports text, tool_addition, and tool_removal blocks only"),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "an empty user turn → the API's sentence",
    body: base("claude-sonnet-5", { messages: [user("a"), assistant("ok"), { role: "user", content: [] }] }),
    expect: bad("messages.2: user messages must have non-empty content"),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "an empty user item in a user run that has content → accepted",
    body: base("claude-sonnet-5", {
      messages: [user("a"), assistant("ok"), { role: "user", content: [] }, user("b")],
    }),
    expect: ok,
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "an unknown role → reported at messages, naming it",
    body: base("claude-sonnet-5", { messages: [{ role: "developer", content: "x" }, user("ping")] }),
    expect: bad('messages: Unexpected role "developer". Allowed roles are "user" or "assistant"'),
  },
  {
    page: PAGE.systemMessages,
    source: "https://github.com/Maol-1997/cursor-claude-connector/issues/3",
    title: "a system message on a model without mid-conversation system messages → the API's sentence",
    body: base("claude-haiku-4-5", { messages: [user("q"), system("be brief")] }),
    expect: bad(
      'messages: Unexpected role "system". The Messages API accepts a top-level `system` parameter, not "system" as an input message role.',
    ),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "an empty model → a length refusal, not an unknown model",
    body: base("claude-sonnet-5", { model: "" }),
    expect: bad("model: String should have at least 1 character"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "an unknown inference_geo → the API's enum sentence",
    body: base("claude-sonnet-5", { inference_geo: "bogus-geo" }),
    expect: bad("inference_geo: must be one of ['global', 'us']"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a container id without the code execution tool → the API's sentence",
    body: base("claude-sonnet-5", { container: "container_x" }),
    expect: bad("container: Container identifier can only be provided when using the code execution tool"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a content block without a type → its type is a missing field",
    body: base("claude-sonnet-5", { messages: [{ role: "user", content: [{}] }] }),
    expect: bad("messages.0.content.0.type: Field required"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a tool with an empty name → a length fault, not the pattern",
    body: base("claude-sonnet-5", {
      tools: [{ name: "", input_schema: { type: "object", properties: {} } }],
    }),
    expect: bad("tools.0.custom.name: String should have at least 1 character"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "two bad fields → tools reported before messages, whatever the key order",
    body: base("claude-sonnet-5", { messages: "x", tools: "x" }),
    expect: bad("tools: Input should be a valid array"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "two bad fields → service_tier reported before top_k",
    body: base("claude-sonnet-5", { top_k: "x", service_tier: 7 }),
    expect: bad("service_tier: Input should be 'auto' or 'standard_only'"),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a bad known field beats an unknown key",
    body: base("claude-sonnet-5", { zzz_unknown: 1, inference_geo: 7 }),
    expect: bad("inference_geo: Input should be a valid string"),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "a misplaced whitespace-only system message → its placement is reported first",
    body: base("claude-sonnet-5", { messages: [user("a"), system("  "), user("b")] }),
    expect: bad(`messages.1: role 'system' must precede an 'assistant' message or end the array${DIRECTIVE}`),
  },
  {
    page: PAGE.errors,
    source: PARITY,
    title: "a container that is neither an id nor an object → named after the object branch",
    body: base("claude-sonnet-5", { container: 7 }),
    expect: bad("container.ContainerParams: Input does not match the expected shape."),
  },
  // Mid-conversation system messages (Opus 4.8 and later).
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "a system message followed by a user turn → the API's placement sentence",
    body: base("claude-opus-4-8", { messages: [user("a"), system("sys"), user("b")] }),
    expect: bad(`messages.1: role 'system' must precede an 'assistant' message or end the array${DIRECTIVE}`),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "a system message first → the API's pointer to the top-level system parameter",
    body: base("claude-opus-4-8", { messages: [system("sys"), user("a")] }),
    expect: bad(`messages.0: use the top-level 'system' parameter for the initial system prompt${DIRECTIVE}`),
  },
  {
    page: PAGE.systemMessages,
    source: PARITY,
    title: "a system message before an assistant turn → accepted",
    body: base("claude-opus-4-8", {
      messages: [user("a"), system("sys"), assistant("ok"), user("b")],
    }),
    expect: { status: 200 },
  },
  {
    page: PAGE.effort,
    source: EFFORT_REPORT,
    title: "effort on Haiku 4.5 → the API's sentence, without a path",
    body: base("claude-haiku-4-5", { output_config: { effort: "high" } }),
    expect: bad("This model does not support the effort parameter."),
  },
  {
    page: PAGE.vision,
    source: UNREADABLE_IMAGE_REPORT,
    title: "image bytes of no known type → the API's bare sentence",
    body: base("claude-sonnet-5-5", {
      messages: [
        {
          role: "user",
          content: [
            { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAAAAAAAAAA" } },
          ],
        },
      ],
    }),
    expect: bad("Could not process image"),
  },
  {
    page: PAGE.mcpConnector,
    source: MCP_REPORT,
    title: "an MCP server no mcp_toolset references → the API's sentence",
    betas: ["mcp-client-2025-11-20"],
    body: base("claude-sonnet-5-5", {
      mcp_servers: [{ type: "url", url: "https://mcp.example/mcp", name: "mcp" }],
    }),
    expect: bad("MCP server 'mcp' is defined but not referenced by any mcp_toolset in tools."),
  },
  {
    page: PAGE.errors,
    source: CONTEXT_MANAGEMENT_REPORT,
    title: "context_management without its beta → an extra input",
    body: base("claude-sonnet-5-5", {
      context_management: { edits: [{ type: "clear_tool_uses_20250919" }] },
    }),
    expect: bad("context_management: Extra inputs are not permitted"),
  },
  {
    page: PAGE.opus5,
    source: EFFORT_WITHOUT_THINKING_REPORT,
    title: "Opus 5 with thinking disabled at effort xhigh → the API's sentence",
    body: base("claude-opus-5", { thinking: { type: "disabled" }, output_config: { effort: "xhigh" } }),
    expect: bad(
      "output_config.effort 'xhigh' is not supported when thinking is disabled on this model. Use effort 'high' or below, or enable thinking.",
    ),
  },
  {
    page: PAGE.structuredOutputs,
    source: SCHEMA_KEYWORD_REPORT,
    title: "an integer with minimum in output_format → the API's sentence at the schema's place",
    betas: ["structured-outputs-2025-11-13"],
    body: base("claude-sonnet-4-6", {
      output_format: {
        type: "json_schema",
        schema: {
          type: "object",
          properties: { age: { type: "integer", minimum: 0 } },
          required: ["age"],
          additionalProperties: false,
        },
      },
    }),
    expect: bad("output_format.schema: For 'integer' type, property 'minimum' is not supported"),
  },
  {
    page: PAGE.structuredOutputs,
    source: SCHEMA_KEYWORDS_REPORT,
    title: "a strict tool's integer with minimum and maximum → both named, sorted",
    body: base("claude-sonnet-4-6", {
      tools: [
        { name: "noop", input_schema: { type: "object", properties: {} } },
        {
          name: "rate",
          strict: true,
          input_schema: {
            type: "object",
            properties: { stars: { type: "integer", minimum: 1, maximum: 5 } },
            required: ["stars"],
            additionalProperties: false,
          },
        },
      ],
    }),
    expect: bad("tools.1.custom: For 'integer' type, properties maximum, minimum are not supported"),
  },
  {
    page: PAGE.structuredOutputs,
    source: PARITY,
    title: "a strict tool with additionalProperties true → the API's sentence",
    body: base("claude-sonnet-4-6", {
      tools: [
        {
          name: "f",
          strict: true,
          input_schema: { type: "object", properties: {}, additionalProperties: true },
        },
      ],
    }),
    expect: bad("tools.0.custom: For 'object' type, 'additionalProperties' must be explicitly set to false"),
  },
  {
    page: PAGE.structuredOutputs,
    source: PARITY,
    title: "a strict tool whose object schema is not closed (no additionalProperties) → the same sentence",
    body: base("claude-sonnet-4-6", {
      tools: [
        {
          name: "f",
          strict: true,
          input_schema: { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
        },
      ],
    }),
    expect: bad("tools.0.custom: For 'object' type, 'additionalProperties' must be explicitly set to false"),
  },
  {
    page: PAGE.structuredOutputs,
    source: PARITY,
    title: "output_config.format whose nested object is not closed → the same sentence",
    body: base("claude-sonnet-4-6", {
      output_config: {
        format: {
          type: "json_schema",
          schema: {
            type: "object",
            properties: { who: { type: "object", properties: { name: { type: "string" } } } },
            required: ["who"],
            additionalProperties: false,
          },
        },
      },
    }),
    expect: bad(
      "output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false",
    ),
  },
  {
    page: PAGE.structuredOutputs,
    source: PARITY,
    title: "a tool that is not strict may leave its object schema open → accepted",
    body: base("claude-sonnet-4-6", {
      tools: [{ name: "f", input_schema: { type: "object", properties: { a: { type: "string" } } } }],
    }),
    expect: ok,
  },
];
