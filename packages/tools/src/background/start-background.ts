import type { ToolResult, ToolUseContext } from "@forkloop/loop-core";
import { toolError } from "../tool-kit.js";
import { type BackgroundRunEnd, backgroundShellsFor } from "./background-shells.js";

/** Claude Code's: how long a background command may run before it is stopped, unless `timeout` says. */
export const BACKGROUND_DEFAULT_TIMEOUT_MS = 600_000;
export const BACKGROUND_MAX_TIMEOUT_MS = 7_200_000;

/** Claude Code's words to a sub-agent, whose shells end with its final answer (R-X1). */
const SUB_AGENT_NOTICE =
  "If it exits while you are still working you will be notified, but it is terminated when you give your " +
  "final response and no notification can follow that — so do not end your turn to wait for it; if you need " +
  "its result, wait for it before giving your final response. ";

/** The part of a Bash call a background start needs. */
export interface BackgroundBashInput {
  readonly command: string;
  readonly description?: string | undefined;
  readonly timeout?: number | undefined;
}

/**
 * Bash with `run_in_background` (R-T4): the command starts in the agent's background shells and
 * the call returns at once with its id and output file, in Claude Code's words. `run` is the very
 * launcher a foreground call uses (bash.ts), so the sandbox and the process-tree kill are the same.
 */
export function startInBackground(
  input: BackgroundBashInput,
  context: ToolUseContext & { readonly toolUseId: string },
  run: (limits: {
    readonly timeoutMs: number;
    readonly signal: AbortSignal;
    readonly onOutput: (chunk: string) => void;
  }) => Promise<BackgroundRunEnd>,
): ToolResult {
  const shells = backgroundShellsFor(context.agentState);
  const started = shells.start({
    command: input.command,
    description: input.description,
    toolUseId: context.toolUseId,
    timeoutMs: input.timeout ?? BACKGROUND_DEFAULT_TIMEOUT_MS,
    run,
  });
  if (typeof started === "string") return toolError(started);
  return {
    content:
      `Command running in background with ID: ${started.id}. Output is being written to: ${started.outputFile}. ` +
      (shells.endsWithFinalAnswer ? SUB_AGENT_NOTICE : "You will be notified when it completes. ") +
      "To check interim output, use Read on that file path.",
    // Said outright, with Bash's structured output naming the task, as Claude Code's (R-K2, R-X1).
    isError: false,
    output: {
      stdout: "",
      stderr: "",
      interrupted: false,
      isImage: false,
      noOutputExpected: false,
      backgroundTaskId: started.id,
    },
  };
}
