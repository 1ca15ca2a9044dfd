import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { allowlistMarkdown, loadAllowlist } from "./allowlist.js";

const ROOT = join(import.meta.dirname, "..", "..", "..");
const BEGIN = "<!-- conformance:begin -->";
const END = "<!-- conformance:end -->";

/**
 * A README's generated differences section (between `<!-- conformance:begin -->` and
 * `<!-- conformance:end -->`) and what the allowlist says it should be; with `write`, the
 * README is rewritten first. Paths are relative to the repository root.
 */
export function readmeSection(
  readme: string,
  allowlistSource: string,
  write: boolean,
): { current: string; generated: string } {
  const path = join(ROOT, readme);
  const text = readFileSync(path, "utf8");
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${readme} needs ${BEGIN} … ${END}`);
  const generated = allowlistMarkdown(loadAllowlist(join(ROOT, allowlistSource)), allowlistSource);
  if (write) writeFileSync(path, `${text.slice(0, start + BEGIN.length)}\n${generated}\n${text.slice(end)}`);
  const current = readFileSync(path, "utf8");
  return {
    current: current.slice(current.indexOf(BEGIN) + BEGIN.length, current.indexOf(END)).trim(),
    generated,
  };
}
