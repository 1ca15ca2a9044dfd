import { isAbsolute, relative } from "node:path";

/**
 * R-K2: what a sub-agent is doing, in Claude Code's words for each tool's activity
 * (`getActivityDescription`), which its `task_progress` messages carry as their description:
 * "Reading notes.txt", "Running npm test", "Searching for TODO". Undefined for a tool with no
 * such words (the task's own description stands instead).
 */
export function toolActivity(name: string, input: unknown, cwd: string): string | undefined {
  const fields = typeof input === "object" && input !== null ? (input as Record<string, unknown>) : {};
  const text = (key: string): string | undefined => {
    const value = fields[key];
    return typeof value === "string" && value.trim() !== "" ? value : undefined;
  };
  const path = (key: string): string | undefined => {
    const value = text(key);
    return value === undefined ? undefined : shownPath(value, cwd);
  };
  const either = (doing: string, what: string | undefined, otherwise: string) =>
    what === undefined ? otherwise : `${doing} ${what}`;
  switch (name) {
    case "Read":
      return either("Reading", path("file_path"), "Reading file");
    case "Write":
      return either("Writing", path("file_path"), "Writing file");
    case "Edit":
      return either("Editing", path("file_path"), "Editing file");
    case "NotebookEdit":
      return either("Editing notebook", path("notebook_path"), "Editing notebook");
    case "Glob":
      return either("Finding", text("pattern"), "Finding files");
    case "Grep":
      return either("Searching for", text("pattern"), "Searching");
    case "Bash":
      return text("command") === undefined
        ? "Running command"
        : `Running ${text("description") ?? text("command")}`;
    case "WebFetch":
      return either("Fetching", text("url"), "Fetching web page");
    case "WebSearch":
      return either("Searching for", text("query"), "Searching the web");
    case "Agent":
    case "Task":
      return text("description")?.replace(/\s+/g, " ").trim() ?? "Running task";
    default:
      return undefined;
  }
}

/** A path as the activity names it: relative to the working directory when inside it. */
function shownPath(path: string, cwd: string): string {
  if (!isAbsolute(path)) return path;
  const inside = relative(cwd, path);
  return inside === "" || inside.startsWith("..") || isAbsolute(inside) ? path : inside;
}
