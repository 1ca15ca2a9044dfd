import { join, resolve } from "node:path";

/**
 * A file or directory whose content makes something run later, outside any sandbox (R-S9,
 * R-S10): git's config, hooks and attributes, forkloop's and Claude Code's settings (hooks, allow
 * rules, MCP servers) of the project and of the user.
 */
export interface ExecutionPoint {
  /** As named (absolute; symlinks not resolved). */
  readonly path: string;
  readonly kind: "directory" | "file";
  /** For messages: what runs from it. */
  readonly what: string;
}

export interface ExecutionPointContext {
  /** The project directory (settings are read from here). */
  readonly cwd: string;
  /** The workspace roots: a project's settings there count too. */
  readonly roots: readonly string[];
  readonly home: string;
  /** `FORKLOOP_HOME`, the user's state and trust list, when set. */
  readonly forkloopHome?: string | undefined;
}

/** The project's own settings files and directories, in each directory a session may start in. */
const PROJECT_POINTS: readonly (readonly [name: string, kind: ExecutionPoint["kind"], what: string])[] = [
  [".forkloop", "directory", "forkloop's project settings (hooks, rules)"],
  [".claude", "directory", "Claude Code's project settings (hooks, rules)"],
  [".mcp.json", "file", "the project's MCP servers"],
];

/** The user's own, wherever home is (inside the workspace when home is the workspace). */
const USER_POINTS: readonly (readonly [name: string, kind: ExecutionPoint["kind"], what: string])[] = [
  [".forkloop", "directory", "forkloop's user settings and trusted projects"],
  [".claude", "directory", "Claude Code's user settings"],
  [".claude.json", "file", "the user's MCP servers"],
  [".gitconfig", "file", "the user's git config"],
  [".config/git", "directory", "the user's git config"],
  // What the user's next shell, login or ssh runs (git push over ssh too): as the user, unsandboxed.
  [".ssh", "directory", "the user's ssh config and keys (ProxyCommand, authorized_keys)"],
  ...[".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".profile"].map(
    (name) => [name, "file", "the user's shell startup file"] as const,
  ),
  ...[".zshenv", ".zprofile", ".zshrc", ".zlogin", ".zlogout"].map(
    (name) => [name, "file", "the user's shell startup file"] as const,
  ),
];

/** Every execution point of the project directories and the user's home (git's: git-points.ts). */
export function settingsExecutionPoints(context: ExecutionPointContext): ExecutionPoint[] {
  const points: ExecutionPoint[] = [];
  for (const dir of new Set([context.cwd, ...context.roots].map((path) => resolve(path)))) {
    for (const [name, kind, what] of PROJECT_POINTS) points.push({ path: join(dir, name), kind, what });
  }
  for (const [name, kind, what] of USER_POINTS) points.push({ path: join(context.home, name), kind, what });
  if (context.forkloopHome !== undefined && context.forkloopHome !== "")
    points.push({
      path: resolve(context.forkloopHome),
      kind: "directory",
      what: "forkloop's state and trusted projects",
    });
  return points;
}
