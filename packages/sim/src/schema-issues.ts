import type { z } from "zod";
import { UNION_TAGS } from "./request-schema.js";

/**
 * Zod issues in the API's (pydantic's) words, with its union-tagged paths (R-D2):
 * `tools.0.custom.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`,
 * `messages.0.content.0.image.source.base64.media_type: Input should be 'image/jpeg', …`,
 * `max_tokens: Input should be a valid integer`, `temperature: range: 0..1`,
 * `metadata.foo: Extra inputs are not permitted`. zod's own texts never leak.
 * The tags follow pydantic's discriminated unions. Tools (`tools.0.custom.name`, a direct-API
 * parity suite: SYSTEM_PLACEMENT_SOURCE in validate-model-rules.ts), content blocks and their
 * sources (`messages.7.content.2.image.source.base64.data`, anthropics/claude-code#5147;
 * `messages.65.content.1.tool_use.text`, anthropics/claude-code#4378) are tagged in the API's
 * own 400s; that configs are tagged the same way is UNCONFIRMED.
 */
export type Issue = z.core.$ZodIssue;
type Path = readonly PropertyKey[];

/** Where a discriminated union sits, as a path pattern (`*` = any index), and how its tag is read. */
const TAGGED: readonly { pattern: string; tag: (node: Record<string, unknown>) => unknown }[] = [
  { pattern: "messages.*.content.*", tag: (n) => n.type },
  { pattern: "messages.*.content.*.content.*", tag: (n) => n.type },
  { pattern: "messages.*.content.*.source", tag: (n) => n.type },
  { pattern: "messages.*.content.*.content.*.source", tag: (n) => n.type },
  { pattern: "messages.*.content.*.source.content.*", tag: (n) => n.type },
  { pattern: "tools.*", tag: (n) => n.type ?? "custom" },
  { pattern: "tool_choice", tag: (n) => n.type },
  { pattern: "thinking", tag: (n) => n.type },
  { pattern: "context_management.edits.*", tag: (n) => n.type },
  { pattern: "output_config.format", tag: (n) => n.type },
];

/**
 * The API's path of `path` inside `raw`: each tagged union adds its tag after its own key
 * (`tagLast: false` leaves the last one untagged, for an error about the tag itself).
 */
function taggedPath(raw: unknown, path: Path, tagLast = true): string {
  const out: string[] = [];
  const pattern: string[] = [];
  let node: unknown = raw;
  for (const [i, key] of path.entries()) {
    out.push(String(key));
    pattern.push(typeof key === "number" ? "*" : String(key));
    node = isRecord(node) || Array.isArray(node) ? (node as Record<PropertyKey, unknown>)[key] : undefined;
    if (!isRecord(node) || (!tagLast && i === path.length - 1)) continue;
    const union = TAGGED.find((t) => t.pattern === pattern.join("."));
    const tag = union?.tag(node);
    if (typeof tag === "string" && tag !== "") out.push(tag);
  }
  return out.join(".");
}

/** `messages.*.content.*` for `messages.3.content.0` (the key of UNION_TAGS). */
function patternOf(path: Path): string {
  return path.map((key) => (typeof key === "number" ? "*" : String(key))).join(".");
}

/** The first issue as the API words it: `<tagged path>: <pydantic message>`. */
export function describeIssue(issue: Issue, raw: unknown, prefix: Path = []): string {
  const path = [...prefix, ...issue.path];
  if (patternOf(path) === "container" && issue.code === "invalid_union") {
    // Neither an id nor an object: named after the object branch (the parity suite).
    return "container.ContainerParams: Input does not match the expected shape.";
  }
  if (issue.code === "invalid_union" && issue.errors.length > 0 && !("discriminator" in issue)) {
    // A plain union (string or blocks): report the branch that got furthest.
    const branches = issue.errors.flat();
    const deepest = branches.reduce<Issue | null>(
      (best, i) => (best === null || i.path.length > best.path.length ? i : best),
      null,
    );
    const chosen = deepest && deepest.path.length > 0 ? deepest : branches.at(-1);
    if (chosen) return describeIssue(chosen, raw, path);
  }
  if (issue.code === "invalid_union" && "discriminator" in issue) {
    // zod points at the discriminator key; pydantic at the union, untagged (the tag is the fault).
    const union = path.slice(0, -1);
    const where = taggedPath(raw, union, false);
    const node = valueAt(raw, union);
    if (patternOf(union) === "messages.*.content.*" && isRecord(node) && node.type === undefined) {
      // A content block without a type: the parity suite's `messages.0.content.0.type: Field required`.
      return `${where}.type: Field required`;
    }
    return `${where === "" ? "" : `${where}: `}${tagMessage(valueAt(raw, union), String(issue.discriminator), union, raw)}`;
  }
  if (issue.code === "unrecognized_keys") {
    return `${taggedPath(raw, [...path, issue.keys[0] ?? ""])}: Extra inputs are not permitted`;
  }
  const input = valueAt(raw, path);
  if (patternOf(path) === "messages.*.role" && issue.code === "invalid_value" && typeof input === "string") {
    // An unknown role is reported at `messages`, naming it (the parity suite: "bogus", "developer").
    return `${taggedPath(raw, path.slice(0, -2))}: Unexpected role "${input}". Allowed roles are "user" or "assistant"`;
  }
  const where = taggedPath(raw, path);
  const message = measuredMessage(issue, path, input) ?? pydanticMessage(issue, input);
  return where === "" ? message : `${where}: ${message}`;
}

/*
 * Where today's API words a fault apart from pydantic's defaults, as a direct-API parity suite
 * measured it on claude-sonnet-5 (2026-08-31):
 * https://github.com/kangminlee-maker/local-OAuth-CLI-API-adapter/blob/87ac1c5ed83001bee363ff8b17051fa4beaf3cc3/test/anthropic-messages-validation-parity.test.mjs
 * — `temperature: range: 0..1`, `max_tokens: must be greater than or equal to 0`,
 * `inference_geo: must be one of ['global', 'us']`, and
 * `system.0` / `metadata` / `output_config` that are not objects `Input does not match the
 * expected shape.` (where `thinking`, `tool_choice`, `cache_control` and blocks say `Input should
 * be an object`; arrays say `a valid array`, TYPE_WORDS below).
 */
const BOUND_WORDS: Readonly<Record<string, string>> = {
  temperature: "range: 0..1",
  top_p: "range: 0..1",
  max_tokens: "must be greater than or equal to 0",
};
const SHAPE_PLACES: ReadonlySet<string> = new Set(["system.*", "metadata", "output_config"]);

function measuredMessage(issue: Issue, path: Path, input: unknown): string | null {
  const place = patternOf(path);
  if (place === "inference_geo" && issue.code === "invalid_value") {
    return typeof input === "string" ? "must be one of ['global', 'us']" : "Input should be a valid string";
  }
  if (issue.code === "too_big" || issue.code === "too_small") return BOUND_WORDS[place] ?? null;
  const notAnObject = issue.code === "invalid_type" || issue.code === "invalid_union";
  if (notAnObject && input !== undefined && SHAPE_PLACES.has(place)) {
    return "Input does not match the expected shape.";
  }
  return null;
}

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: "a valid string",
  number: "a valid number",
  int: "a valid integer",
  boolean: "a valid boolean",
  array: "a valid array",
  object: "an object",
  record: "an object",
  null: "None",
};

function pydanticMessage(issue: Issue, input: unknown): string {
  switch (issue.code) {
    case "invalid_type": {
      if (input === undefined) return "Field required";
      if (issue.expected === "int" && typeof input === "number" && Number.isFinite(input)) {
        return "Input should be a valid integer, got a number with a fractional part";
      }
      // An integer field given a non-number: zod says "number"; the schema's `integer()` says so.
      if (issue.message.startsWith("Input should be")) return issue.message;
      return `Input should be ${TYPE_WORDS[issue.expected] ?? `a valid ${issue.expected}`}`;
    }
    case "invalid_value":
      // A missing enum or literal field is missing, not a wrong value (pydantic's wording).
      return input === undefined ? "Field required" : `Input should be ${quotedList(issue.values)}`;
    case "invalid_union":
      return "Input should be an object";
    case "too_small":
      return bound(issue.origin, "at least", issue.minimum, issue.inclusive === true, input);
    case "too_big":
      return bound(issue.origin, "at most", issue.maximum, issue.inclusive === true, input);
    case "invalid_format":
      return issue.format === "regex" && "pattern" in issue
        ? `String should match pattern '${String(issue.pattern).replace(/^\/|\/[a-z]*$/g, "")}'`
        : `Input should be a valid ${issue.format}`;
    case "custom":
      return issue.message;
    default:
      return "Invalid input";
  }
}

function tagMessage(node: unknown, discriminator: string, union: Path, raw: unknown): string {
  if (!isRecord(node)) return "Input should be an object";
  const tag = node[discriminator];
  if (tag === undefined) return `Unable to extract tag using discriminator '${discriminator}'`;
  const expected =
    UNION_TAGS[`${patternOf(union)}@${String(parentTag(raw, union))}`] ?? UNION_TAGS[patternOf(union)];
  const list = expected ? `: ${expected.map((t) => `'${t}'`).join(", ")}` : "";
  return `Input tag '${String(tag)}' found using '${discriminator}' does not match any of the expected tags${list}`;
}

function bound(
  origin: string,
  side: "at least" | "at most",
  limit: number | bigint,
  inclusive: boolean,
  input: unknown,
): string {
  if (origin === "string") return `String should have ${side} ${limit} character${limit === 1 ? "" : "s"}`;
  if (origin === "array") {
    const count = Array.isArray(input) ? input.length : 0;
    return `List should have ${side} ${limit} item${limit === 1 ? "" : "s"} after validation, not ${count}`;
  }
  const relation = side === "at least" ? "greater than" : "less than";
  return `Input should be ${relation}${inclusive ? " or equal to" : ""} ${limit}`;
}

/** `'a'`, `'a' or 'b'`, `'a', 'b' or 'c'` — pydantic's literal list. */
export function quotedList(values: readonly unknown[]): string {
  const quoted = values.map((v) => (typeof v === "string" ? `'${v}'` : String(v)));
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}` : (quoted[0] ?? "");
}

/** The `type` of the object holding `path`'s last key (an image's or a document's source). */
function parentTag(raw: unknown, path: Path): unknown {
  const parent = valueAt(raw, path.slice(0, -1));
  return isRecord(parent) ? parent.type : undefined;
}

function valueAt(raw: unknown, path: Path): unknown {
  let node = raw;
  for (const key of path) {
    if (!isRecord(node) && !Array.isArray(node)) return undefined;
    node = (node as Record<PropertyKey, unknown>)[key];
  }
  return node;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
