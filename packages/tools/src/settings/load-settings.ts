import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import type { z } from "zod";
import { CONFIG_FILE_MAX_BYTES, readProjectFile } from "../project-files/read-project-file.js";
import type { HeldPoints } from "../sandbox/held-points.js";
import { isProjectTrusted } from "./project-trust.js";
import {
  EMPTY_SETTINGS,
  FOREIGN_HOOK_EVENTS,
  fixFor,
  HOOK_EVENTS,
  type HookSettings,
  type Settings,
  type SettingsFile,
  settingsFileSchema,
  unknownHookEvents,
} from "./settings-schema.js";
import { narrowUntrustedFile } from "./untrusted-settings.js";

export type LoadSettingsResult =
  | {
      readonly ok: true;
      readonly settings: Settings;
      readonly sources: readonly string[];
      /**
       * What untrusted project files asked for and did not get (R-S5), one line per file, e.g.
       * `/p/.forkloop/settings.json: ignored permissions.allow (Bash), hooks …`; say it once on stderr.
       */
      readonly ignored: readonly string[];
      /** Whether the project's settings were taken as trusted (`forkloop trust`, `--trust-project`). */
      readonly trusted: boolean;
    }
  | { readonly ok: false; readonly error: string };

/** Where a settings file lives, as Claude Code's `settingSources` name them. */
export type SettingSource = "user" | "project" | "local";

export const SETTING_SOURCES: readonly SettingSource[] = ["user", "project", "local"];

export interface LoadSettingsOptions {
  readonly home?: string;
  /** Which kinds of files to read (default: all three). */
  readonly sources?: readonly SettingSource[];
  /** `--trust-project`: this run takes the project's settings as they are. */
  readonly trustProject?: boolean;
  /**
   * `--settings FILE|JSON` (Claude Code's flag settings): read after every file, so it wins, and
   * trusted as the user's own files are — the user typed it. `label` names it in errors.
   */
  readonly flagSettings?: { readonly label: string; readonly text: string };
  /** What running sandboxed commands may still create (held-points.ts): such a file is skipped, said once. */
  readonly held?: HeldPoints;
}

/**
 * The settings files, lowest precedence first: the user's (home) files, then the project's shared
 * files, then the project's `.local` files (not committed). `.claude/` files are read for
 * compatibility with Claude Code; at the same level the `.forkloop/` file wins. `sources` keeps
 * only the files of those kinds (default: all three).
 */
export function settingsFilePaths(
  cwd: string,
  home: string,
  sources: readonly SettingSource[] = SETTING_SOURCES,
): string[] {
  const files: [SettingSource, string][] = [
    ["user", join(home, ".claude", "settings.json")],
    ["user", join(home, ".forkloop", "settings.json")],
    ["project", join(cwd, ".claude", "settings.json")],
    ["project", join(cwd, ".forkloop", "settings.json")],
    ["local", join(cwd, ".claude", "settings.local.json")],
    ["local", join(cwd, ".forkloop", "settings.local.json")],
  ];
  return [...new Set(files.filter(([source]) => sources.includes(source)).map(([, path]) => path))];
}

/**
 * Loads, validates (zod) and merges every settings file that exists. Lists (rules, directories,
 * hooks) accumulate across files; single values (defaultMode, model) come from the most specific
 * file; env maps merge. A bad file is an error naming the file, the key path and the fix.
 */
export async function loadSettings(
  cwd: string,
  options: LoadSettingsOptions = {},
): Promise<LoadSettingsResult> {
  const home = options.home ?? homedir();
  const files: { path: string; settings: SettingsFile }[] = [];
  // The user's own files; with cwd = home the project's are the user's (the set keeps them once).
  const userFiles = new Set(settingsFilePaths(cwd, home, ["user"]));
  const ignored: string[] = [];
  for (const path of settingsFilePaths(cwd, home, options.sources)) {
    // R-S8: read as Read reads a file, inside the directory it belongs to. Refused is an error,
    // not a skip: leaving out a file could drop the deny rules it holds.
    const read = readProjectFile(path, {
      roots: [userFiles.has(path) ? home : cwd],
      maxBytes: CONFIG_FILE_MAX_BYTES,
      what: "settings file",
      ...(options.held === undefined ? {} : { held: options.held }),
    });
    if (read.status === "missing") continue;
    // What a running command may have just written there is not the file's owner's: skipped.
    if (read.status === "refused" && read.heldBy !== undefined) {
      ignored.push(read.message.replace(/^forkloop: /, ""));
      continue;
    }
    if (read.status === "refused")
      return { ok: false, error: `${path}: cannot use the settings file: ${read.reason}. Fix: ${read.fix}.` };
    const parsed = parseSettingsText(path, read.text);
    if (!parsed.ok) return parsed;
    files.push({ path, settings: parsed.settings });
  }
  if (options.flagSettings !== undefined) {
    const { label, text } = options.flagSettings;
    const parsed = parseSettingsText(label, text);
    if (!parsed.ok) return parsed;
    files.push({ path: label, settings: parsed.settings });
    userFiles.add(label);
  }
  ignored.push(
    ...files.flatMap((file) => {
      const unknown = unknownHookEvents(file.settings.hooks);
      return unknown.length === 0
        ? []
        : [
            `${file.path}: ignored hooks for ${unknown.join(", ")} — not a hook event forkloop or Claude Code knows; the events are ${[...HOOK_EVENTS, ...FOREIGN_HOOK_EVENTS].join(", ")}.`,
          ];
    }),
  );
  // R-S5: the project's own files (a checked-out repository) may narrow permissions, never widen
  // them, unless the user trusts the project; the user's files and flags are trusted as they are.
  const trusted = options.trustProject === true || isProjectTrusted(cwd, home);
  let narrowed = files;
  if (!trusted) {
    const user = mergeSettings(
      files.filter((file) => userFiles.has(file.path)).map((file) => file.settings),
      cwd,
      home,
    );
    const baseline = {
      cwd,
      home,
      mode: user.permissions.defaultMode ?? "default",
      // R-S11: with no choice of the user's, the project is measured against the strongest default
      // (batch and dontAsk sandbox by default), so its `sandbox: "off"` can never switch one off.
      sandbox: user.sandbox ?? "auto",
    } as const;
    narrowed = files.map((file) => {
      if (userFiles.has(file.path)) return file;
      const result = narrowUntrustedFile(file.settings, baseline);
      if (result.ignored.length > 0) {
        ignored.push(
          `${file.path}: ignored ${result.ignored.join(", ")} — the project is not trusted; run \`forkloop trust ${cwd}\` or pass --trust-project to use them.`,
        );
      }
      return { path: file.path, settings: result.file };
    });
  }
  return {
    ok: true,
    settings: mergeSettings(
      narrowed.map((file) => file.settings),
      cwd,
      home,
    ),
    sources: files.map((f) => f.path),
    ignored,
    trusted,
  };
}

function parseSettingsText(
  path: string,
  text: string,
): { readonly ok: true; readonly settings: SettingsFile } | { readonly ok: false; readonly error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      error: `${path}: not valid JSON (${(error as Error).message}). Fix: correct the syntax; comments and trailing commas are not allowed.`,
    };
  }
  const parsed = settingsFileSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: describeIssues(path, parsed.error.issues) };
  return { ok: true, settings: parsed.data };
}

function describeIssues(path: string, issues: readonly z.core.$ZodIssue[]): string {
  const lines = issues.map((issue) => {
    const key = formatKeyPath(issue.path);
    const keys = issue.code === "unrecognized_keys" ? ` (${issue.keys.join(", ")})` : "";
    return `${path}: ${key}: ${issue.message}${keys}. Fix: ${fixFor(issue.path)}.`;
  });
  return lines.join("\n");
}

/** `permissions.allow[2]`, `hooks.PreToolUse[0].hooks[1].command`; `(root)` for the file itself. */
function formatKeyPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  return path
    .map((segment, index) =>
      typeof segment === "number" ? `[${segment}]` : `${index === 0 ? "" : "."}${String(segment)}`,
    )
    .join("");
}

/** Merges validated files, lowest precedence first. */
function mergeSettings(files: readonly SettingsFile[], cwd: string, home: string): Settings {
  const unique = (lists: (readonly string[] | undefined)[]): string[] => [
    ...new Set(lists.flatMap((list) => list ?? [])),
  ];
  const lastDefined = <Value>(pick: (file: SettingsFile) => Value | undefined): Value | undefined =>
    files
      .map(pick)
      .filter((value) => value !== undefined)
      .at(-1);

  const directories = unique(files.map((file) => file.permissions?.additionalDirectories)).map((directory) =>
    directory === "~" || directory.startsWith("~/")
      ? join(home, directory.slice(1))
      : isAbsolute(directory)
        ? directory
        : resolve(cwd, directory),
  );
  const hooks: Record<string, HookSettings[keyof HookSettings]> = {};
  for (const event of HOOK_EVENTS) {
    const groups = files.flatMap((file) => file.hooks?.[event] ?? []);
    if (groups.length > 0) hooks[event] = groups;
  }
  const defaultMode = lastDefined((file) => file.permissions?.defaultMode);
  const disableBypass = lastDefined((file) => file.permissions?.disableBypassPermissionsMode);
  const model = lastDefined((file) => file.model);
  const sandbox = lastDefined((file) => file.sandbox);
  const apiKeyHelper = lastDefined((file) => file.apiKeyHelper);
  const worktreeBaseRef = lastDefined((file) => file.worktree?.baseRef);
  const loop = {
    alwaysThinkingEnabled: lastDefined((file) => file.alwaysThinkingEnabled),
    maxThinkingTokens: lastDefined((file) => file.maxThinkingTokens),
    toolUseSummaryModel: lastDefined((file) => file.toolUseSummaryModel),
    contextEditing: lastDefined((file) => file.contextEditing),
  };
  const env = Object.assign({}, ...files.map((file) => file.env ?? {})) as Record<string, string>;
  return {
    ...EMPTY_SETTINGS,
    permissions: {
      allow: unique(files.map((file) => file.permissions?.allow)),
      ask: unique(files.map((file) => file.permissions?.ask)),
      deny: unique(files.map((file) => file.permissions?.deny)),
      ...(defaultMode === undefined ? {} : { defaultMode }),
      ...(directories.length === 0 ? {} : { additionalDirectories: directories }),
      ...(disableBypass === undefined ? {} : { disableBypassPermissionsMode: disableBypass }),
    },
    hooks: hooks as HookSettings,
    ...(Object.keys(env).length === 0 ? {} : { env }),
    ...(model === undefined ? {} : { model }),
    ...(sandbox === undefined ? {} : { sandbox }),
    ...(apiKeyHelper === undefined ? {} : { apiKeyHelper }),
    ...(worktreeBaseRef === undefined ? {} : { worktreeBaseRef }),
    ...Object.fromEntries(Object.entries(loop).filter(([, value]) => value !== undefined)),
  };
}
