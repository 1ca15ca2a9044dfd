import { createRequire } from "node:module";

// R-V2: the YAML parser is required when the first frontmatter is read (an agent or skill
// file), not at import.
const requireOnUse = createRequire(import.meta.url);
const parseYaml = (text: string): unknown => (requireOnUse("yaml") as typeof import("yaml")).parse(text);

export type FrontmatterResult =
  | { readonly ok: true; readonly data: Record<string, unknown>; readonly body: string }
  | { readonly ok: false; readonly error: string };

const FENCE = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/;

/** Splits a Markdown file into its YAML frontmatter (between `---` fences) and body. */
export function parseFrontmatter(text: string): FrontmatterResult {
  const match = FENCE.exec(text);
  if (!match) return { ok: true, data: {}, body: text };
  let data: unknown;
  try {
    data = parseYaml(match[1] ?? "");
  } catch (error) {
    return { ok: false, error: `invalid YAML frontmatter: ${(error as Error).message}` };
  }
  if (data === null || data === undefined) data = {};
  if (typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, error: "frontmatter must be a YAML mapping (key: value lines)" };
  }
  return { ok: true, data: data as Record<string, unknown>, body: text.slice(match[0].length) };
}
