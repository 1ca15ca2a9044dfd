import { createHash } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { OptionsError } from "@forkloop/sdk/errors";
import { CONFIG_FILE_MAX_BYTES, linearIgnore, looksBinary, readProjectFile } from "@forkloop/tools";
import { glob } from "tinyglobby";
import type { JobItem } from "./job-backend.js";
import { plural } from "./plural.js";

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

/** The value a placeholder's path (`.a.b` of `{{item.a.b}}`) picks out of an item; undefined when absent. */
function pick(value: unknown, path: string): unknown {
  for (const key of path.split(".").filter(Boolean)) {
    value = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  }
  return value;
}

export function renderTemplate(template: string, values: { file?: string; item?: unknown }): string {
  return template.replace(PLACEHOLDER, (_match, name: string, path: string) => {
    const value = pick(name === "file" ? values.file : values.item, path);
    if (value === undefined) return "";
    return typeof value === "string" ? value : JSON.stringify(value);
  });
}

function itemId(label: string): string {
  return createHash("sha256").update(label).digest("hex").slice(0, 16);
}

/** A `--files` match left out at enqueue: it would cost a request and answer nothing. */
export type SkippedFile =
  | { readonly file: string; readonly why: "binary" }
  | { readonly file: string; readonly why: "unreadable"; readonly code: string };

export interface LoadedItems {
  readonly items: JobItem[];
  readonly skipped: readonly SkippedFile[];
}

/** Reads the items (sorted, deterministic ids, so a resume and a rerun agree on identity). */
export async function loadItems(source: ItemSource, template: string): Promise<LoadedItems> {
  validateTemplate(template, source);
  if (source.kind === "files") {
    const files = await globFiles(source.pattern, source.cwd);
    if (files.length === 0) {
      throw new OptionsError(
        `--files "${source.pattern}" matched no file under ${source.cwd}; check the pattern and --cwd.`,
      );
    }
    const skipped = await unusableFiles(files, source.cwd);
    const left = new Set(skipped.map((entry) => entry.file));
    const usable = files.filter((file) => !left.has(file));
    if (usable.length === 0) {
      throw new OptionsError(
        `--files "${source.pattern}": every match was left out — ${describeSkipped(skipped)}; match text files instead.`,
      );
    }
    const items = usable.map((file) => ({
      id: itemId(`file:${file}`),
      label: file,
      prompt: renderTemplate(template, { file }),
    }));
    return { items, skipped };
  }
  let text: string;
  try {
    text = await readFile(source.path, "utf8");
  } catch (error) {
    throw new OptionsError(
      `--items ${source.path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? error}).`,
    );
  }
  const keyPaths = [...template.matchAll(PLACEHOLDER)]
    .map((match) => match[2] ?? "")
    .filter((path) => path !== "");
  const items: JobItem[] = [];
  const missing: string[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new OptionsError(
        `--items ${source.path}:${index + 1} is not JSON; write one JSON value per line (e.g. "text" or {"id":1}).`,
      );
    }
    const where = `${source.path}:${index + 1}`;
    for (const path of keyPaths)
      if (pick(value, path) === undefined) missing.push(`${where} has no ${JSON.stringify(path.slice(1))}`);
    items.push({
      id: itemId(`item:${index + 1}:${line}`),
      label: itemLabel(value, where),
      prompt: renderTemplate(template, { item: value }),
    });
  }
  if (items.length === 0)
    throw new OptionsError(`--items ${source.path} has no items; write one JSON value per line.`);
  if (missing.length > 0) {
    // Checked for every item before the run: a missing key used to render "" and be paid for.
    const shown = missing.slice(0, 5).join("; ");
    const more = missing.length > 5 ? ` (and ${missing.length - 5} more)` : "";
    throw new OptionsError(
      `--prompt uses ${keyPaths.map((path) => `{{item${path}}}`).join(", ")}, but ${shown}${more}. Give every line the key, or change --prompt.`,
    );
  }
  return { items, skipped: [] };
}

/** An item's label: its `id` field when it has one (a string or a number), else `file:line`. */
function itemLabel(value: unknown, where: string): string {
  const id = value !== null && typeof value === "object" ? (value as { id?: unknown }).id : undefined;
  return typeof id === "string" || typeof id === "number" ? String(id) : where;
}

/** Matches whose first 8 KiB hold a NUL byte (binary, as git and ripgrep judge) or cannot be read. */
async function unusableFiles(files: readonly string[], cwd: string): Promise<SkippedFile[]> {
  const skipped: SkippedFile[] = [];
  // A bounded number of open files at once: a batch may match tens of thousands.
  for (let start = 0; start < files.length; start += 64) {
    const chunk = files.slice(start, start + 64);
    const verdicts = await Promise.all(chunk.map((file) => sniff(join(cwd, file))));
    for (const [index, verdict] of verdicts.entries()) {
      const file = chunk[index] ?? "";
      if (verdict === "binary") skipped.push({ file, why: "binary" });
      else if (verdict !== "text") skipped.push({ file, why: "unreadable", code: verdict.code });
    }
  }
  return skipped;
}

async function sniff(path: string): Promise<"text" | "binary" | { code: string }> {
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(path, "r");
    const buffer = Buffer.alloc(8192);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return looksBinary(buffer.subarray(0, bytesRead)) ? "binary" : "text";
  } catch (error) {
    return { code: (error as NodeJS.ErrnoException).code ?? String(error) };
  } finally {
    await handle?.close().catch(() => {});
  }
}

/** `skipped 2 binary files (a.png, b.bin) and 1 unreadable file (c.txt: EACCES)`. */
export function describeSkipped(skipped: readonly SkippedFile[]): string {
  const names = (entries: readonly SkippedFile[]) => {
    const shown = entries
      .slice(0, 5)
      .map((entry) => (entry.why === "binary" ? entry.file : `${entry.file}: ${entry.code}`));
    return `${shown.join(", ")}${entries.length > 5 ? `, … ${entries.length - 5} more` : ""}`;
  };
  const binary = skipped.filter((entry) => entry.why === "binary");
  const unreadable = skipped.filter((entry) => entry.why === "unreadable");
  const parts = [
    ...(binary.length > 0 ? [`${plural(binary.length, "binary file")} (${names(binary)})`] : []),
    ...(unreadable.length > 0
      ? [`${plural(unreadable.length, "unreadable file")} (${names(unreadable)})`]
      : []),
  ];
  return `skipped ${parts.join(" and ")}`;
}

/** Files matching the glob, relative to cwd, minus what .gitignore excludes (and .git, node_modules). */
export async function globFiles(pattern: string, cwd: string): Promise<string[]> {
  const files = await glob(pattern, {
    cwd,
    onlyFiles: true,
    dot: false,
    ignore: ["**/node_modules/**", "**/.git/**"],
  });
  // The checkout's .gitignore is hostile input: read as a project file, matched in linear time (R-S12).
  const read = readProjectFile(join(cwd, ".gitignore"), {
    roots: [cwd],
    maxBytes: CONFIG_FILE_MAX_BYTES,
    singleLink: false,
    what: ".gitignore",
  });
  const rules = linearIgnore().add(read.status === "read" ? read.text : "");
  return files
    .map((file) => relative(cwd, join(cwd, file)))
    .filter((file) => !file.startsWith("..") && !rules.ignores(file))
    .sort();
}
