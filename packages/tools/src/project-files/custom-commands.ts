import { join } from "node:path";
import { INSTRUCTION_FILE_MAX_BYTES, readProjectFile } from "./read-project-file.js";

/**
 * Claude Code's custom slash commands (R-X1): `/name args` runs the Markdown file
 * `.claude/commands/name.md` (or `.forkloop/commands/name.md`; `/dir:name` is
 * `commands/dir/name.md`) of the project or of the user's home, as the prompt.
 */
export interface CustomCommand {
  readonly name: string;
  readonly path: string;
  readonly scope: "project" | "user";
  /** The file's text after its frontmatter. */
  readonly body: string;
  /** Frontmatter `allowed-tools`: permission rules the command's run adds. */
  readonly allowedTools: readonly string[];
  /** Frontmatter `model`. */
  readonly model?: string;
}

export type CustomCommandLookup =
  | { readonly status: "found"; readonly command: CustomCommand }
  | { readonly status: "missing" }
  | { readonly status: "refused"; readonly message: string };

const NAME = /^[A-Za-z0-9][\w-]*(?::[A-Za-z0-9][\w-]*)*$/;

/**
 * The command `name` names, looked up as Claude Code does: the project's directories from
 * `projectDirs` (outermost first; inner ones and `.forkloop` win), then the user's home. Read as
 * Read reads a file, inside the directory it belongs to (R-S8).
 */
export function findCustomCommand(
  name: string,
  options: { readonly projectDirs: readonly string[]; readonly home?: string },
): CustomCommandLookup {
  if (!NAME.test(name)) return { status: "missing" };
  const file = `${join(...name.split(":"))}.md`;
  const workspace = options.projectDirs[0];
  const candidates = [
    ...[...options.projectDirs].reverse().flatMap((dir) =>
      [".forkloop", ".claude"].map((base) => ({
        path: join(dir, base, "commands", file),
        root: workspace ?? dir,
        scope: "project" as const,
      })),
    ),
    ...(options.home === undefined
      ? []
      : [".forkloop", ".claude"].map((base) => ({
          path: join(options.home as string, base, "commands", file),
          root: options.home as string,
          scope: "user" as const,
        }))),
  ];
  for (const candidate of candidates) {
    const read = readProjectFile(candidate.path, {
      roots: [candidate.root],
      maxBytes: INSTRUCTION_FILE_MAX_BYTES,
      what: "command",
    });
    if (read.status === "missing") continue;
    if (read.status === "refused") return { status: "refused", message: read.message };
    const { data, body } = splitFrontmatter(read.text);
    return {
      status: "found",
      command: {
        name,
        path: candidate.path,
        scope: candidate.scope,
        body,
        allowedTools: toolList(data["allowed-tools"]),
        ...(data.model === undefined || data.model === "" ? {} : { model: String(data.model) }),
      },
    };
  }
  return { status: "missing" };
}

const INDEXED = /\$ARGUMENTS\[(\d)\]|\$(\d)(?!\d)/g;

/**
 * The prompt a command sends, as Claude Code 2.1.332 sends it: the command's name and arguments
 * in its tags, then the body with `$ARGUMENTS` replaced, and `$ARGUMENTS[N]` / `$N` by the Nth
 * word counted from 0 (`$1` is the second word; one past the words stays as written); arguments
 * a body does not place follow it as `ARGUMENTS: …`.
 */
export function customCommandPrompt(command: CustomCommand, args: string): string {
  const words = args.trim() === "" ? [] : args.trim().split(/\s+/);
  const placed = command.body.includes("$ARGUMENTS") || new RegExp(INDEXED.source).test(command.body);
  let body = command.body.replace(
    INDEXED,
    (whole, bracketed: string | undefined, bare: string | undefined) =>
      words[Number(bracketed ?? bare)] ?? whole,
  );
  body = body.replaceAll("$ARGUMENTS", args.trim());
  if (!placed && words.length > 0) body = `${body.trimEnd()}\n\nARGUMENTS: ${args.trim()}\n`;
  const name = command.name;
  return `<command-message>${name}</command-message>\n<command-name>/${name}</command-name>\n<command-args>${args.trim()}</command-args>\n\n${body}`;
}

/** `key: value` frontmatter between `---` fences; lists as `[a, b]` or `- a` lines. */
function splitFrontmatter(text: string): { data: Record<string, unknown>; body: string } {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n?/.exec(text);
  if (!match) return { data: {}, body: text };
  const data: Record<string, unknown> = {};
  let listKey: string | undefined;
  for (const line of (match[1] ?? "").split(/\r?\n/)) {
    const item = /^\s+-\s+(.*)$/.exec(line);
    if (item && listKey !== undefined) {
      (data[listKey] as string[]).push(unquote(item[1] ?? ""));
      continue;
    }
    const pair = /^([\w-]+):\s*(.*)$/.exec(line);
    if (!pair) continue;
    const [, key = "", value = ""] = pair;
    listKey = value.trim() === "" ? key : undefined;
    data[key] = value.trim() === "" ? [] : unquote(value.trim());
  }
  return { data, body: text.slice(match[0].length) };
}

function unquote(value: string): string {
  return /^(["']).*\1$/.test(value) ? value.slice(1, -1) : value;
}

/** `allowed-tools`: `Read, Bash(git add:*)`, `[Read, Grep]` or a list; commas inside parentheses kept. */
function toolList(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String).filter((rule) => rule !== "");
  if (typeof value !== "string") return [];
  const text = value.replace(/^\[(.*)\]$/s, "$1");
  return (text.match(/[^\s,()[\]]+(?:\([^)]*\))?/g) ?? []).map(unquote);
}
