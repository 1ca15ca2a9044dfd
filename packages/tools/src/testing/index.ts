import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { AgentState, PermissionMode, Tool, ToolResult, ToolUseContext } from "@forkloop/loop-core";
import { createAgentState } from "@forkloop/loop-core";
import { afterEach, beforeEach } from "vitest";
import { type SandboxPlan, sandboxArgs } from "../sandbox/bubblewrap.js";

/** A real temporary directory (resolved, so paths compare equal to what the tools report). */
export interface TempWorkspace {
  readonly root: string;
  /** Removes the directory tree; safe to call twice. */
  cleanup(): void;
}

export function createTempWorkspace(prefix = "forkloop-tools-"): TempWorkspace {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * A real directory where the sandbox does not hide it (R-S9, sandbox tests): under /var/tmp, not
 * the temp dir — bubblewrap gives /tmp a fresh tmpfs, so an "outside" directory there would look
 * unwritable to a sandboxed command even with `/` bound writable, and a test could not fail.
 */
export function createOutsideDir(prefix = "forkloop-outside-"): TempWorkspace {
  const root = realpathSync(mkdtempSync(join("/var/tmp", prefix)));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * The sandbox tests' controls (R-S9): bwrap arguments with one protection removed, passed as
 * `createBashTool({ sandboxArgs })` — a seam in code, which no settings file or variable reaches.
 * Each sandbox test shows its assertion flips under one of these.
 */
export const weakenedSandbox = {
  /** The whole file system writable (`--bind / /` instead of `--ro-bind / /`). */
  rootWritable: (plan: SandboxPlan): string[] => {
    const args = sandboxArgs(plan);
    const at = args.findIndex(
      (arg, index) => arg === "--ro-bind" && args[index + 1] === "/" && args[index + 2] === "/",
    );
    if (at === -1) throw new Error("weakenedSandbox.rootWritable: no --ro-bind / / in the arguments");
    args[at] = "--bind";
    return args;
  },
  /** No read-only execution points and no pinned names. */
  noExecutionPoints: (plan: SandboxPlan): string[] => sandboxArgs({ ...plan, readOnly: [], pinned: [] }),
  /** Host socket files left as they are. */
  noSocketCover: (plan: SandboxPlan): string[] => sandboxArgs({ ...plan, sockets: [] }),
  /** The network shared without the unix-socket filter. */
  sharedNetworkUnfiltered: (plan: SandboxPlan): string[] => {
    const { seccompFd: _, ...rest } = plan;
    return sandboxArgs({ ...rest, network: true });
  },
  /** No unix-socket filter (bwrap is still given the program's descriptor, and ignores it). */
  noUnixSocketFilter: (plan: SandboxPlan): string[] => {
    const { seccompFd: _, ...rest } = plan;
    return sandboxArgs(rest);
  },
  /** The host's /run visible. */
  hostRun: (plan: SandboxPlan): string[] => withoutTmpfs(sandboxArgs(plan), "/run"),
  /** The host's /tmp visible. */
  hostTmp: (plan: SandboxPlan): string[] => withoutTmpfs(sandboxArgs(plan), "/tmp"),
} as const;

function withoutTmpfs(args: string[], dir: string): string[] {
  const at = args.findIndex((arg, index) => arg === "--tmpfs" && args[index + 1] === dir);
  if (at === -1) throw new Error(`weakenedSandbox: no --tmpfs ${dir} in the arguments`);
  args.splice(at, 2);
  return args;
}

/**
 * Registers a fresh temp workspace per test (vitest beforeEach/afterEach) and returns a live
 * view of it: `ws.root` and `ws.context()` refer to the current test's directory.
 */
export function useTempWorkspace(prefix?: string): {
  readonly root: string;
  context(
    options?: Omit<Parameters<typeof createToolTestContext>[0], "cwd">,
  ): ReturnType<typeof createToolTestContext>;
} {
  let current: TempWorkspace | undefined;
  beforeEach(() => {
    current = createTempWorkspace(prefix);
  });
  afterEach(() => current?.cleanup());
  const root = (): string => {
    if (current === undefined) throw new Error("useTempWorkspace: used outside a test");
    return current.root;
  };
  return {
    get root() {
      return root();
    },
    context: (options) => createToolTestContext({ ...options, cwd: root() }),
  };
}

/** A ToolUseContext for calling tools directly, without the loop. */
export function createToolTestContext(options: {
  readonly cwd: string;
  readonly workspaceRoots?: readonly string[];
  readonly tools?: readonly Tool[];
  readonly agentState?: AgentState;
  readonly permissionMode?: PermissionMode;
  readonly abortController?: AbortController;
}): ToolUseContext & { readonly toolUseId: string } {
  return {
    cwd: options.cwd,
    workspaceRoots: options.workspaceRoots ?? [options.cwd],
    tools: options.tools ?? [],
    abortController: options.abortController ?? new AbortController(),
    agentId: "main",
    agentState: options.agentState ?? createAgentState(),
    options: { model: "test-model", permissionMode: options.permissionMode ?? "default" },
    toolUseId: "toolu_test",
  };
}

/**
 * Validates `input` with the tool's zod schema and calls it, as the loop's pipeline does (R-T1):
 * invalid input becomes an is_error result instead of reaching `call`.
 */
export async function callTool(
  tool: Tool,
  input: Record<string, unknown>,
  context: ToolUseContext & { readonly toolUseId: string },
): Promise<ToolResult> {
  const parsed = tool.inputSchema.safeParse(input);
  if (!parsed.success) return { content: `InputValidationError: ${parsed.error.message}`, isError: true };
  const filled = tool.backfillInput ? tool.backfillInput(parsed.data, context) : parsed.data;
  return tool.call(filled, context);
}

/** The text of a tool result (tests assert on it). */
export function resultText(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
}

/**
 * True while `pid` is a live process. A zombie counts as dead: it has exited, and in a container
 * whose PID 1 does not reap, orphans stay zombies forever although nothing runs.
 */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * The live processes (zombies excluded) with `token` as one of their arguments, from /proc: how a
 * test finds what a command started wherever it went (another session, reparented to init).
 */
export function livePidsWithArgument(token: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    if (argv.includes(token) && isProcessAlive(pid)) pids.push(pid);
  }
  return pids;
}

/** Polls `condition` (every 20 ms, up to `attempts` times); for waiting on real processes and files. */
export async function waitFor(condition: () => boolean, attempts = 250): Promise<boolean> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return condition();
}
export { recordHeldPoints } from "../sandbox/held-points.js";
export { backtrackingRegexEngine } from "./backtracking-regex-engine.js";
