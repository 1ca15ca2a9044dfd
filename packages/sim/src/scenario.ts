import { readFile } from "node:fs/promises";
import { z } from "zod";
import { NAMED_FAULTS } from "./faults.js";
import { SimError } from "./sim-error.js";

/**
 * A rule's text condition: `/regex/flags` is a regular expression, anything else a substring
 * (undefined). Throws a SyntaxError for a regex that does not compile.
 */
export function textConditionRegex(pattern: string): RegExp | undefined {
  const literal = /^\/(.+)\/([a-z]*)$/s.exec(pattern);
  return literal ? new RegExp(literal[1] ?? "", literal[2]) : undefined;
}

/** A substring, or `/regex/flags` (checked to compile). */
const textMatcher = z
  .string()
  .min(1)
  .refine(
    (text) => {
      try {
        textConditionRegex(text);
        return true;
      } catch {
        return false;
      }
    },
    { message: "invalid regular expression" },
  );

const replyBlockSchema = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("text"), text: z.string() }),
  z.strictObject({
    type: z.literal("tool_use"),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    id: z.string().optional(),
  }),
  z.strictObject({ type: z.literal("thinking"), thinking: z.string() }),
  z.strictObject({
    type: z.literal("server_tool_use"),
    name: z.string().min(1),
    input: z.record(z.string(), z.unknown()),
    id: z.string().optional(),
  }),
]);

const webPage = z.strictObject({
  url: z.string().url(),
  title: z.string(),
  text: z.string().optional(),
  page_age: z.string().nullable().optional(),
});

const replySchema = z.strictObject({
  content: z.array(replyBlockSchema),
  stop_reason: z
    .enum(["end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn"])
    .optional(),
  /** A refusal's `stop_details` category and explanation. */
  refusal: z
    .strictObject({
      category: z
        .enum(["cyber", "bio", "frontier_llm", "reasoning_extraction", "general_harms"])
        .nullable()
        .optional(),
      explanation: z.string().nullable().optional(),
    })
    .optional(),
});

const faultSchema = z.union([z.string().regex(/^[45]\d\d$/, "a status 400-599"), z.enum(NAMED_FAULTS)]);

const ruleSchema = z
  .strictObject({
    /** All given conditions must hold. */
    match: z
      .strictObject({
        /** Exact turn index, or a range. */
        turn: z
          .union([
            z.number().int().nonnegative(),
            z.strictObject({ min: z.number().int().optional(), max: z.number().int().optional() }),
          ])
          .optional(),
        /** Substring of the last user text, or `/regex/flags`. */
        lastUserText: textMatcher.optional(),
        /** Substring of (any) tool result in the last user message, or `/regex/flags`. */
        lastToolResult: textMatcher.optional(),
        querySource: z.string().optional(),
        model: z.string().optional(),
      })
      .default({}),
    reply: replySchema.optional(),
    fault: faultSchema.optional(),
    /** Use this rule at most this many times. */
    times: z.number().int().positive().optional(),
  })
  .refine((rule) => rule.reply !== undefined || rule.fault !== undefined, {
    message: "a rule needs a reply, a fault or both",
  });

/** A scripted scenario: rules tried in order, first match wins. */
const scenarioSchema = z.strictObject({
  name: z.string().optional(),
  rules: z.array(ruleSchema).min(1),
  /** Reply when no rule matches; without it an unmatched request is an error. */
  fallback: replySchema.optional(),
  /** What web search and web fetch answer from (server-tools.ts, R-D4). */
  web: z
    .strictObject({
      search: z.array(z.strictObject({ query: textMatcher, results: z.array(webPage) })).optional(),
      pages: z.record(z.string(), webPage.omit({ url: true })).optional(),
      images: z.record(z.string(), z.base64()).optional(),
    })
    .optional(),
});

export type Scenario = z.infer<typeof scenarioSchema>;
export type ScenarioRule = Scenario["rules"][number];

/** A scenario file that cannot be read or is not valid: the message names the file and the JSON path. */
export class ScenarioError extends SimError {
  override readonly name = "ScenarioError";
  constructor(message: string) {
    super("invalid_scenario", message);
  }
}

/** Reads and validates a scenario file; errors name the file and the JSON path. */
export async function loadScenario(path: string): Promise<Scenario> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new ScenarioError(`${path}: cannot read scenario: ${(error as Error).message}`);
  }
  return parseScenario(text, path);
}

/** Parses scenario JSON text; `source` names it in errors. */
export function parseScenario(text: string, source = "scenario"): Scenario {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ScenarioError(`${source}: invalid JSON: ${(error as Error).message}`);
  }
  const parsed = scenarioSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.length ? issue.path.map(String).join(".") : "(root)";
    throw new ScenarioError(`${source}: ${path}: ${issue?.message ?? "invalid scenario"}`);
  }
  return parsed.data;
}
