import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { OptionsError } from "@forkloop/sdk/errors";
import ignore from "ignore";
import { glob } from "tinyglobby";
import type { JobItem } from "./job-backend.js";

/**
 * Where a batch's items come from: files matching a glob (`{{file}}` in the prompt) or the lines
 * of a JSONL file (`{{item}}`, and `{{item.key}}` for a field of an object line).
 */
export type ItemSource =
  | { readonly kind: "files"; readonly pattern: string; readonly cwd: string }
  | { readonly kind: "items"; readonly path: string };

const PLACEHOLDER = /\{\{\s*(file|item)((?:\.[A-Za-z_$][\w$]*)*)\s*\}\}/g;

/** Checks the template against the source before anything runs, so a typo costs no tokens. */
export function validateTemplate(template: string, source: ItemSource): void {
  const used = new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1]));
  const wanted = source.kind === "files" ? "file" : "item";
  const other = source.kind === "files" ? "item" : "file";
  if (used.has(other)) {
    throw new OptionsError(
      `--prompt uses {{${other}}} but the items come from ${source.kind === "files" ? "--files" : "--items"}; use {{${wanted}}} instead.`,
    );
  }
  if (!used.has(wanted)) {
    throw new OptionsError(
      `--prompt must contain {{${wanted}}} so each item gets its own prompt, e.g. --prompt "Summarize {{${wanted}}}".`,
    );
  }
  const leftover = template.replace(PLACEHOLDER, "").match(/\{\{[^}]*\}\}/);
  if (leftover) {
    throw new OptionsError(
      `--prompt has an unknown placeholder ${leftover[0]}; only {{file}}, {{item}} and {{item.key}} exist.`,
    );
  }
}

export function renderTemplate(template: string, values: { file?: string; item?: unknown }): string {
  return template.replace(PLACEHOLDER, (_match, name: string, path: string) => {
    let value: unknown = name === "file" ? values.file : values.item;
    for (const key of path.split(".").filter(Boolean)) {
      value =
        value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
    }
    if (value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function itemId(label: string): string {
  return createHash("sha256").update(label).digest("hex").slice(0, 16);
}

/** Reads the items (sorted, deterministic ids, so a resume and a rerun agree on identity). */
export async function loadItems(source: ItemSource, template: string): Promise<JobItem[]> {
  validateTemplate(template, source);
  if (source.kind === "files") {
    const files = await globFiles(source.pattern, source.cwd);
    if (files.length === 0) {
      throw new OptionsError(
        `--files "${source.pattern}" matched no file under ${source.cwd}; check the pattern and --cwd.`,
      );
    }
    return files.map((file) => ({
      id: itemId(`file:${file}`),
      label: file,
      prompt: renderTemplate(template, { file }),
    }));
  }
  let text: string;
  try {
    text = await readFile(source.path, "utf8");
  } catch (error) {
    throw new OptionsError(
      `--items ${source.path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error}).`,
    );
  }
  const items: JobItem[] = [];
  const lines = text.split("\n");
  for (const [index, line] of lines.entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new OptionsError(
        `--items ${source.path}:${index + 1} is not JSON; write one JSON value per line (e.g. "text" or {"id":1}).`,
      );
    }
    const label = `${source.path}:${index + 1}`;
    items.push({
      id: itemId(`item:${index + 1}:${line}`),
      label,
      prompt: renderTemplate(template, { item: value }),
    });
  }
  if (items.length === 0)
    throw new OptionsError(`--items ${source.path} has no items; write one JSON value per line.`);
  return items;
}

/** Files matching the glob, relative to cwd, minus what .gitignore excludes (and .git, node_modules). */
export async function globFiles(pattern: string, cwd: string): Promise<string[]> {
  const files = await glob(pattern, {
    cwd,
    onlyFiles: true,
    dot: false,
    ignore: ["**/node_modules/**", "**/.git/**"],
  });
  const rules = ignore();
  const gitignore = await readFile(join(cwd, ".gitignore"), "utf8").catch(() => "");
  rules.add(gitignore);
  return files
    .map((file) => relative(cwd, join(cwd, file)))
    .filter((file) => !file.startsWith("..") && !rules.ignores(file))
    .sort();
}
