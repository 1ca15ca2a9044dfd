import { createRequire } from "node:module";
import type { Ajv, ErrorObject, Options, ValidateFunction } from "ajv";
import type { RegExpEngine } from "ajv/dist/types/index.js";
import { z } from "zod";

// R-V2: ajv (CommonJS, a few hundred files with its drafts) is required synchronously when the
// first JSON-Schema tool is compiled — an MCP server's or a parent's tool in a worker — never at
// import: a session with neither never loads it.
const requireOnUse = createRequire(import.meta.url);

/** A tool's input schema as JSON Schema (the API's `input_schema`: an object schema). */
export interface JsonSchemaObject {
  readonly type: "object";
  readonly [keyword: string]: unknown;
}

/** What a tool built from JSON Schema carries: the zod validator and the schema the API is sent. */
export interface JsonSchemaInput {
  /** Validates with the JSON Schema itself (ajv); issues keep the JSON path of the failing value. */
  readonly inputSchema: z.ZodType<Record<string, unknown>>;
  /** The schema as given, without `$schema`: `toolDefinition` sends exactly this. */
  readonly inputJSONSchema: JsonSchemaObject;
}

export type JsonSchemaInputResult =
  | ({ readonly ok: true } & JsonSchemaInput)
  | { readonly ok: false; readonly error: string };

type Draft = "2020-12" | "2019-09" | "draft-07";

/**
 * One compiler per draft, made on first use. `addUsedSchema: false` keeps compiled schemas out of
 * the instance (two servers' tools may share a `$id`), and each schema is removed from ajv's cache
 * once compiled, so a long-lived process that reconnects servers does not accumulate them.
 */
const compilers = new Map<Draft, Ajv>();

/**
 * `pattern` and `patternProperties` in linear time (R-S12): the schema is the user's or an MCP
 * server's, but the string matched is the model's, and V8's backtracking engine takes hours on
 * `^(a+)+$` against forty characters — the thread validating an item's structured output or a tool
 * call stops with it. re2js (required on first use, as ajv) matches what it can read; a pattern it
 * cannot (lookaround, backreferences, `\u` escapes) keeps JavaScript's engine, as before.
 */
const linearPatterns: RegExpEngine = Object.assign(
  (pattern: string, flags: string) => {
    let compiled: import("re2js").RE2JS;
    try {
      const { RE2JS } = requireOnUse("re2js") as typeof import("re2js");
      compiled = RE2JS.compile(pattern);
    } catch {
      return new RegExp(pattern, flags);
    }
    // ajv keeps one compiled pattern per `toString()`: it must tell patterns apart, as RegExp's does.
    return { test: (text: string) => compiled.matcher(text).find(), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'require("re2js")' },
);

const AJV_OPTIONS: Options = {
  code: { regExp: linearPatterns },
  strict: false, // servers use keywords ajv does not know (e.g. `title` variants, vendor keys)
  allErrors: true,
  // JSON Schema 2020-12 makes `format` an annotation; enforcing ajv's formats would refuse inputs
  // the server itself accepts (its own validator decides).
  validateFormats: false,
  addUsedSchema: false,
  logger: false,
};

function compiler(draft: Draft): Ajv {
  let ajv = compilers.get(draft);
  if (!ajv) {
    // Only the draft's own entry: each pulls in its meta-schemas and vocabularies (R-V2).
    // Constructors taken out first: a `new` over an asserted call loses its parentheses in emit.
    if (draft === "2020-12") {
      const { Ajv2020 } = requireOnUse("ajv/dist/2020.js") as typeof import("ajv/dist/2020.js");
      ajv = new Ajv2020(AJV_OPTIONS);
    } else if (draft === "2019-09") {
      const { Ajv2019 } = requireOnUse("ajv/dist/2019.js") as typeof import("ajv/dist/2019.js");
      ajv = new Ajv2019(AJV_OPTIONS);
    } else {
      const { Ajv: Ajv07 } = requireOnUse("ajv") as typeof import("ajv");
      ajv = new Ajv07(AJV_OPTIONS);
    }
    compilers.set(draft, ajv);
  }
  return ajv;
}

/**
 * The draft a schema is written in. No `$schema` means 2020-12 (the MCP spec's default and the
 * draft the Messages API reads tool schemas in); draft-04/06 and unknown drafts are read as
 * draft-07, which they differ from only in keywords tool schemas rarely use.
 */
function draftOf(schema: Record<string, unknown>): Draft {
  const declared = typeof schema.$schema === "string" ? schema.$schema : "";
  if (declared === "" || declared.includes("2020-12")) return "2020-12";
  if (declared.includes("2019-09")) return "2019-09";
  return "draft-07";
}

/**
 * A tool input defined by JSON Schema (MCP tools, a parent's tool in a worker): validated by a
 * real JSON-Schema validator, sent to the API unchanged. A schema that does not compile is an
 * expected failure (a server may send anything); it is refused here rather than sent, because an
 * invalid `input_schema` makes the API reject every request of the session.
 */
export function jsonSchemaInput(
  schema: unknown,
  options: {
    /**
     * Compile at the first validation instead of now: for a schema already accepted elsewhere (a
     * parent's tool in a worker), so a fork that never calls the tool never loads ajv, whose load
     * and meta-schema compile were most of a cold thread's time to its first request (R-V2). A
     * schema that then fails to compile fails each validation, naming why.
     */
    readonly compileOnFirstUse?: boolean;
  } = {},
): JsonSchemaInputResult {
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    return { ok: false, error: "the input schema is not a JSON object" };
  }
  const record = schema as Record<string, unknown>;
  if (record.type !== "object") {
    return { ok: false, error: `the input schema's type is ${JSON.stringify(record.type)}, not "object"` };
  }
  const { $schema: _draft, ...sent } = record;
  let compiled: ValidateFunction | { readonly error: string } | undefined;
  if (options.compileOnFirstUse !== true) {
    compiled = compile(record, sent);
    if (typeof compiled !== "function") return { ok: false, ...compiled };
  }
  const inputSchema = z.record(z.string(), z.unknown()).superRefine((value, context) => {
    compiled ??= compile(record, sent);
    if (typeof compiled !== "function") {
      context.addIssue({ code: "custom", path: [], message: compiled.error });
      return;
    }
    if (compiled(value)) return;
    for (const issue of compiled.errors ?? []) {
      const { path, message } = describeIssue(issue);
      context.addIssue({ code: "custom", path, message });
    }
  });
  return { ok: true, inputSchema, inputJSONSchema: sent as JsonSchemaObject };
}

/** The schema's validator, or why it does not compile. */
function compile(
  record: Record<string, unknown>,
  sent: Record<string, unknown>,
): ValidateFunction | { readonly error: string } {
  const draft = draftOf(record);
  const ajv = compiler(draft);
  // Unknown drafts are compiled as draft-07 without their `$schema` (ajv would look it up).
  const compiled = draft === "draft-07" ? sent : record;
  try {
    return ajv.compile(compiled);
  } catch (error) {
    return { error: `the input schema is not valid JSON Schema (${(error as Error).message})` };
  } finally {
    ajv.removeSchema(compiled);
  }
}

/** ajv's error as a zod issue: the instance path as a zod path, the property named where ajv has it. */
function describeIssue(issue: ErrorObject): { path: (string | number)[]; message: string } {
  const path = issue.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replaceAll("~1", "/").replaceAll("~0", "~"))
    .map((segment) => (/^\d+$/.test(segment) ? Number(segment) : segment));
  const params = issue.params as Record<string, unknown>;
  switch (issue.keyword) {
    case "required":
      return { path, message: `missing required property "${String(params.missingProperty)}"` };
    case "additionalProperties":
      return { path, message: `unexpected property "${String(params.additionalProperty)}"` };
    case "enum":
      return {
        path,
        message: `${issue.message ?? "must be one of"}: ${JSON.stringify(params.allowedValues)}`,
      };
    default:
      return { path, message: issue.message ?? `fails "${issue.keyword}"` };
  }
}
