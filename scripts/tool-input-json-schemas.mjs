/**
 * Writes packages/tools/src/builtin-input-json-schemas.ts: each built-in tool's input JSON
 * Schema, as `z.toJSONSchema(inputSchema, { io: "input" })` gives it, so a session's first
 * request sends the tools' definitions without building their zod schemas (R-V2). Run it after
 * changing a tool's input schema (and `npx turbo run build --filter=@forkloop/tools`), then build
 * again; packages/tools/src/builtin-tools.test.ts fails until the file matches.
 *
 * usage: node scripts/tool-input-json-schemas.mjs   (from the repository root)
 */
import { execFileSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { z } from "zod";

const { createBuiltinTools } = await import("../packages/tools/dist/index.js");
const schemas = Object.fromEntries(
  createBuiltinTools({})
    .map((tool) => [tool.name, z.toJSONSchema(tool.inputSchema, { io: "input" })])
    .sort(([a], [b]) => a.localeCompare(b)),
);
const file = new URL("../packages/tools/src/builtin-input-json-schemas.ts", import.meta.url);
writeFileSync(
  file,
  `// Written by scripts/tool-input-json-schemas.mjs from the built-in tools' zod input schemas: do not edit.
import type { JsonSchemaObject } from "@forkloop/loop-core";

/**
 * Each built-in tool's input as the API is sent it (\`z.toJSONSchema(inputSchema, { io: "input" })\`),
 * computed ahead: a session's first request builds none of the tools' zod schemas (R-V2).
 * builtin-tools.test.ts checks each against its schema.
 */
export const BUILTIN_INPUT_JSON_SCHEMAS: Readonly<Record<string, JsonSchemaObject>> = ${JSON.stringify(schemas, null, 2)};
`,
);
execFileSync("npx", ["biome", "format", "--write", file.pathname], { stdio: "inherit" });
