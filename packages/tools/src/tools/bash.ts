import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import type { BackgroundRunEnd } from "../background/background-shells.js";
import { runMovableCommand } from "../background/movable-command.js";
import {
  BACKGROUND_DEFAULT_TIMEOUT_MS,
  BACKGROUND_MAX_TIMEOUT_MS,
  startInBackground,
} from "../background/start-background.js";
import { gitSafeEnvironment } from "../git-safe-environment.js";
import { FIRST_INPUT_FD, type ProcessGroupRun, runInProcessGroup } from "../process-group.js";
import { findBubblewrap, type SandboxPlan, type SandboxPolicy } from "../sandbox/bubblewrap.js";
import type { SandboxCall } from "../sandbox/sandbox-call.js";
import { isReadOnlyShellCommand } from "../shell/read-only-shell.js";
import { toolEnvironment } from "../tool-environment.js";
import { defineTool, toolError } from "../tool-kit.js";

const BASH_DEFAULT_TIMEOUT_MS = 120_000;
const BASH_MAX_TIMEOUT_MS = 600_000;
/** Per stream (stdout, stderr); Claude Code's BASH_MAX_OUTPUT_LENGTH default. */
const BASH_MAX_OUTPUT_CHARS = 30_000;

export interface BashToolOptions {
  readonly defaultTimeoutMs?: number;
  readonly maxOutputChars?: number;
  /** Variables the user set explicitly (settings `env`): added after the credentials are removed (R-S4). */
  readonly env?: Readonly<Record<string, string>>;
  /** The environment Bash starts from, before the credentials are removed (default `process.env`). */
  readonly baseEnv?: NodeJS.ProcessEnv;
  /**
   * R-S6: run every call in bubblewrap (workspace roots writable, the rest read-only, no network
   * unless `network`). Resolve `auto` before (probeBubblewrap); enabled without a working bwrap,
   * each call is an error that says so — never an unsandboxed run.
   */
  readonly sandbox?: SandboxPolicy;
  /**
   * Test seam for the sandbox tests' controls (R-S9): how a plan becomes bwrap's arguments
   * (default `sandboxArgs`). Code only — no settings key or variable reaches it, so a project
   * cannot weaken the sandbox through it.
   */
  readonly sandboxArgs?: (plan: SandboxPlan) => string[];
  /** The user's home (default `os.homedir()`): its settings stay read-only in the sandbox when it lies in the workspace (R-S9). */
  readonly home?: string;
}

const bashInput = lazySchema(() =>
  z.object({
    command: z.string().min(1).describe("The command to run"),
    // A number, as Claude Code's schema says (a fractional millisecond is no reason to refuse a call).
    timeout: z
      .number()
      .min(1)
      .max(BACKGROUND_MAX_TIMEOUT_MS)
      .optional()
      .describe(`Timeout in milliseconds (max ${BASH_MAX_TIMEOUT_MS} for a foreground command)`),
    description: z.string().optional().describe("What the command does, in 5-10 words"),
    run_in_background: z
      .boolean()
      .optional()
      .describe(
        "Set to true to run this command in the background. With it, `timeout` limits how long the " +
          `command may run in the background before it is stopped (default ${BACKGROUND_DEFAULT_TIMEOUT_MS} ms, ` +
          `max ${BACKGROUND_MAX_TIMEOUT_MS} ms).`,
      ),
    dangerouslyDisableSandbox: z
      .boolean()
      .optional()
      .describe(
        "Claude Code's request to run the command outside the sandbox. forkloop never does: with the sandbox on, " +
          "a call that sets this is refused (only the user turns the sandbox off); with it off, it changes nothing.",
      ),
  }),
);

export function createBashTool(options: BashToolOptions = {}) {
  const defaultTimeoutMs = options.defaultTimeoutMs ?? BASH_DEFAULT_TIMEOUT_MS;
  const maxOutputChars = options.maxOutputChars ?? BASH_MAX_OUTPUT_CHARS;
  return defineTool({
    name: "Bash",
    description:
      "Runs a command with `bash -c` in the working directory and returns its output (stdout, then stderr) " +
      `and a non-zero exit code. Timeout in milliseconds (default ${defaultTimeoutMs}, max ${BASH_MAX_TIMEOUT_MS}); ` +
      "on timeout or interrupt the whole process group is killed, and background jobs end when the command ends. " +
      `Output beyond ${maxOutputChars} characters per stream keeps its beginning and end. Prefer Read, Grep, ` +
      "Glob and Edit over cat, grep, find and sed. `run_in_background` starts the command detached and returns " +
      "its task id and output file at once: Read that file for its output so far, TaskStop ends it (its whole " +
      "process tree), and you are notified when it exits.",
    inputSchema: bashInput,
    isConcurrencySafe: (input) => isReadOnlyShellCommand(input.command),
    isReadOnly: (input) => isReadOnlyShellCommand(input.command),
    maxResultSizeChars: 100_000,
    async call(input, context) {
      // R-S6: the sandbox is the user's choice, never the model's — no call runs outside it.
      if (input.dangerouslyDisableSandbox === true && options.sandbox?.enabled === true) {
        return toolError(
          "dangerouslyDisableSandbox is refused: the sandbox is on for this session and only the user can turn it off " +
            "(the sandbox setting). The command was not run; run it inside the sandbox, or ask the user.",
        );
      }
      if (input.run_in_background === true) {
        return startInBackground(input, context, async (limits) =>
          backgroundEnd(await runBashCommand(input.command, options, context, { ...limits, maxOutputChars })),
        );
      }
      if (input.timeout !== undefined && input.timeout > BASH_MAX_TIMEOUT_MS) {
        return toolError(
          `timeout ${input.timeout} ms is over the ${BASH_MAX_TIMEOUT_MS} ms a foreground command may take; ` +
            "set run_in_background to run it longer.",
        );
      }
      const timeoutMs = input.timeout ?? defaultTimeoutMs;
      // Movable to the background while it runs (query().backgroundTasks(), R-T5).
      return runMovableCommand(input, context, {
        timeoutMs,
        run: (limits) => runBashCommand(input.command, options, context, { ...limits, maxOutputChars }),
        result: (outcome) =>
          "error" in outcome ? toolError(outcome.error) : callResult(outcome.run, outcome.blocked, timeoutMs),
        end: backgroundEnd,
      });
    },
  });
}

/** How one run of a command is bounded, and where its output goes as it comes. */
export interface BashRunLimits {
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  readonly maxOutputChars: number;
  readonly onOutput?: (chunk: string, stream: "stdout" | "stderr") => void;
  /** Restarts the timeout with a new length (a call moved to the background, R-T5). */
  readonly onTimer?: (retime: (timeoutMs: number) => void) => void;
}

/**
 * One command run as every Bash call runs it — a process group of its own, the call's marks, the
 * credentials removed, the sandbox when it is on (R-S6) — for the foreground call and for a
 * background shell alike, so neither is a way around the other's confinement. `blocked` lists
 * what the sandbox moved aside; `error` says why the command could not run.
 */
export async function runBashCommand(
  command: string,
  options: BashToolOptions,
  context: { readonly cwd: string; readonly workspaceRoots: readonly string[] },
  limits: BashRunLimits,
): Promise<{ run: ProcessGroupRun; blocked: string[] } | { error: string }> {
  for (let attempt = 1; ; attempt++) {
    const sandbox = await sandboxFor(options, context);
    if (typeof sandbox === "string") return { error: sandbox };
    let run: ProcessGroupRun;
    let blocked: string[] = [];
    try {
      run = await runInProcessGroup(command, {
        cwd: context.cwd,
        env: bashEnvironment(options),
        ...(sandbox === undefined
          ? {}
          : { launcher: sandbox.launcher, inputs: sandbox.inputs, startedFd: sandbox.startedFd }),
        timeoutMs: limits.timeoutMs,
        signal: limits.signal,
        maxOutputChars: limits.maxOutputChars,
        ...(limits.onOutput === undefined ? {} : { onOutput: limits.onOutput }),
        ...(limits.onTimer === undefined ? {} : { onTimer: limits.onTimer }),
      });
    } catch (error) {
      return { error: `Could not start bash: ${(error as Error).message}` };
    } finally {
      blocked = sandbox?.settle() ?? [];
    }
    // bwrap failed while setting up, before the command could run — most often a host socket
    // it was to cover closed after it was listed (R-S9): prepared afresh, the call is safe to
    // run again.
    const unstarted = run.started === false && !run.timedOut && !run.aborted;
    if (unstarted && attempt < SANDBOX_SETUP_ATTEMPTS) continue;
    return { run, blocked };
  }
}

/** How a command run ended, for a background shell's notice and trailer. */
function backgroundEnd(
  outcome: { run: ProcessGroupRun; blocked: string[] } | { error: string },
): BackgroundRunEnd {
  if ("error" in outcome)
    return { exitCode: null, signal: null, timedOut: false, aborted: false, ...outcome };
  return { ...outcome.run, notes: outcome.blocked };
}

/** Setting up the sandbox is tried this many times (a fresh plan each) before its error is the result. */
const SANDBOX_SETUP_ATTEMPTS = 3;

/** What the model gets for a finished command: its output, then why it failed, if it did. */
function callResult(run: ProcessGroupRun, blocked: readonly string[], timeoutMs: number) {
  const output = [run.stdout.trimEnd(), run.stderr.trimEnd(), ...blocked]
    .filter((part) => part.length > 0)
    .join("\n");
  // The model sees what the command printed before it failed, then why it failed.
  const failed = (reason: string) => toolError(output ? `${output}\n\n${reason}` : reason);
  if (run.timedOut) {
    return failed(`Command timed out after ${timeoutMs} ms; its whole process group was killed.`);
  }
  if (run.aborted) return failed("Command was interrupted; its whole process group was killed.");
  if (run.exitCode !== 0) {
    return failed(
      run.exitCode === null ? `Killed by signal ${run.signal ?? "unknown"}` : `Exit code ${run.exitCode}`,
    );
  }
  return {
    content: output.length > 0 ? output : "(no output)",
    // Said outright, as Claude Code's Bash results do (R-X1).
    isError: false,
    // Claude Code's structured output (R-K2, R-X1); forkloop does not guess which commands are
    // silent by nature, so noOutputExpected stays false.
    output: {
      stdout: run.stdout.trimEnd(),
      stderr: run.stderr.trimEnd(),
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
    },
  };
}

/** Without the model credentials, with the settings' `env`, and git made safe against the repository's config (R-S4, R-S2). */
function bashEnvironment(options: BashToolOptions): NodeJS.ProcessEnv {
  const env = toolEnvironment(options.baseEnv ?? process.env, options.env);
  return { ...env, ...gitSafeEnvironment(env) };
}

/**
 * The sandbox for this call, undefined without one, or why the required sandbox cannot run. Its
 * setup modules load at the first sandboxed call (R-V2: importing the SDK does not load them).
 */
async function sandboxFor(
  options: BashToolOptions,
  context: { readonly cwd: string; readonly workspaceRoots: readonly string[] },
): Promise<SandboxCall | string | undefined> {
  const sandbox = options.sandbox;
  if (sandbox?.enabled !== true) return undefined;
  const bwrap = sandbox.bwrap ?? findBubblewrap();
  if (bwrap === undefined) {
    return 'The sandbox is on (sandbox: "on") but bubblewrap (bwrap) is not on PATH, so the command was not run. Install bubblewrap, or set sandbox to "off".';
  }
  const env = options.baseEnv ?? process.env;
  const { prepareSandboxCall } = await import("../sandbox/sandbox-call.js");
  return prepareSandboxCall(bwrap, sandbox, context, {
    firstInputFd: FIRST_INPUT_FD,
    forkloopHome: env.FORKLOOP_HOME,
    ...(options.home === undefined
      ? sandbox.home === undefined
        ? {}
        : { home: sandbox.home }
      : { home: options.home }),
    ...(sandbox.userDir === undefined ? {} : { userDir: sandbox.userDir }),
    ...(options.sandboxArgs === undefined ? {} : { sandboxArgs: options.sandboxArgs }),
  });
}

export const bashTool = createBashTool();
