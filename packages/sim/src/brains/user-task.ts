import { blocksOf } from "../conversation-turns.js";
import type { MessagesRequest } from "../request-schema.js";

/**
 * What the user asked, as the built-in policy reads it: only the user's own
 * text — clients put `<system-reminder>` blocks (git status, `Co-Authored-By: Claude Opus 5.5`,
 * tool lists) into user messages, and a file named `5.5` must not come out of them.
 */
export interface UserTask {
  /** The user's own text of the task message. */
  text: string;
  /** Index of that message in `messages`. */
  index: number;
  /**
   * True when nothing has been done for the task yet: only `role: "system"` messages follow it
   * (Claude Code 2.1.332 sends its environment block as a system message after the prompt).
   */
  fresh: boolean;
}

export type TaskPlan =
  | { kind: "rename"; from: string; to: string; file: string }
  | { kind: "files"; paths: string[]; globs: string[] };

const REMINDER = /<system-reminder>[\s\S]*?(?:<\/system-reminder>|$)/g;
/**
 * A completion notice of a background sub-agent, as Claude Code sends it in a user message
 * (`<task-notification>…<status>completed</status><summary>…</summary>…</task-notification>`):
 * a report on work already dispatched, never a new task (R-D5).
 */
const NOTIFICATION = /<task-notification>[\s\S]*?(?:<\/task-notification>|$)/g;

function stripSystemReminders(text: string): string {
  return text.replace(REMINDER, "").replace(NOTIFICATION, "").trim();
}

/** The completion notices in a message: each one's status and summary. */
export function notificationsOf(
  message: MessagesRequest["messages"][number] | undefined,
): { status: string; summary: string }[] {
  if (message?.role !== "user") return [];
  return blocksOf(message).flatMap((b) =>
    b.type !== "text"
      ? []
      : [...b.text.matchAll(NOTIFICATION)].map(([notice]) => ({
          status: /<status>([\s\S]*?)<\/status>/.exec(notice)?.[1]?.trim() ?? "completed",
          summary: /<summary>([\s\S]*?)<\/summary>/.exec(notice)?.[1]?.trim() ?? "a background task",
        })),
  );
}

/** The user's own text of one message (its text blocks, reminders removed; tool results skipped). */
function ownText(message: MessagesRequest["messages"][number]): string {
  return blocksOf(message)
    .flatMap((b) => (b.type === "text" ? [stripSystemReminders(b.text)] : []))
    .filter((t) => t !== "")
    .join("\n");
}

/** The latest user message with text of the user's own: the task the conversation is on. */
export function currentTask(body: MessagesRequest): UserTask | null {
  const last = body.messages.length - 1;
  for (let i = last; i >= 0; i--) {
    const message = body.messages[i];
    if (message?.role !== "user") continue;
    const text = ownText(message);
    if (text !== "") return { text, index: i, fresh: i === last || onlySystemAfter(body, i) };
  }
  return null;
}

function onlySystemAfter(body: MessagesRequest, index: number): boolean {
  return body.messages.slice(index + 1).every((message) => message.role === "system");
}

/** The last message that is not a `role: "system"` message (the turn a reply answers). */
export function lastTurnMessage(body: MessagesRequest): MessagesRequest["messages"][number] | undefined {
  return body.messages.findLast((message) => message.role !== "system");
}

const RENAME =
  /\brename\s+(?:(?:the\s+)?(?:function|method|variable|constant|class|type|interface|symbol|identifier|field|property)\s+)?[`"']?([A-Za-z_$][\w$]*)[`"']?\s+(?:to|as|into)\s+[`"']?([A-Za-z_$][\w$]*)[`"']?\s+in\s+[`"']?([^\s`"']+)/i;

/**
 * Paths like `src/a.ts`, `./README.md`, `/tmp/x/notes.txt`: a name with an extension that has a
 * letter in it, so a version (`Opus 5.5`, `1.2.3`) is not a file.
 */
const PATH =
  /(?:^|[\s"'`(,])((?:\.{0,2}\/)?[\w@.-]+(?:\/[\w@.-]+)*\.(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{1,10})(?=$|[\s"'`),:;!?])/g;
/** A glob: a path with `*` in it (a `?` would be read as the end of a question). */
const GLOB = /(?:^|[\s"'`(])((?:\.{0,2}\/)?[\w@.{},*/-]*\*[\w@.{},*/-]*)(?=$|[\s"'`),:;!?])/g;

/**
 * What the task names: a rename in a file, or the files and globs it mentions, in order. Read
 * from the last line that names something back (clients put context before the actual prompt,
 * and a fork's directive ends with its task after the agent's own instructions).
 */
export function planOf(text: string): TaskPlan {
  const lines = text.split("\n");
  for (let i = lines.length - 1; i >= 0; i--) {
    const plan = planOfLine(lines[i] ?? "");
    if (plan.kind === "rename" || plan.paths.length > 0 || plan.globs.length > 0) return plan;
  }
  return { kind: "files", paths: [], globs: [] };
}

function planOfLine(text: string): TaskPlan {
  const rename = RENAME.exec(text);
  if (rename) {
    const file = findFilePaths(rename[3] ?? "")[0];
    if (file) return { kind: "rename", from: rename[1] ?? "", to: rename[2] ?? "", file };
  }
  const globs = unique([...text.matchAll(GLOB)].map((m) => m[1] ?? ""));
  const paths = findFilePaths(text).filter((p) => !globs.some((g) => g.includes(p)));
  return { kind: "files", paths, globs };
}

export function findFilePaths(text: string): string[] {
  return unique([...text.matchAll(PATH)].map((m) => m[1] ?? "").filter((p) => !/[*{]/.test(p)));
}

function unique(items: string[]): string[] {
  return [...new Set(items.filter((i) => i !== ""))];
}
