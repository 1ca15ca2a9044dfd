import type { ToolResult, ToolUseContext } from "@forkloop/loop-core";
import {
  BACKGROUND_OUTPUT_MAX_BYTES,
  type BackgroundRunEnd,
  type BackgroundShellInfo,
  backgroundShellsFor,
} from "./background-shells.js";
import { BACKGROUND_DEFAULT_TIMEOUT_MS, type BackgroundBashInput } from "./start-background.js";

/** How one foreground run is started, answered when it ends, and reported when it ends moved. */
interface MovableCommandSpec<Outcome> {
  readonly timeoutMs: number;
  readonly run: (limits: {
    readonly timeoutMs: number;
    readonly signal: AbortSignal;
    readonly onOutput: (chunk: string) => void;
    readonly onTimer: (retime: (timeoutMs: number) => void) => void;
  }) => Promise<Outcome>;
  /** The call's result when the run ends in the foreground. */
  readonly result: (outcome: Outcome) => ToolResult;
  /** How the run ended, for the background shell it became. */
  readonly end: (outcome: Outcome) => BackgroundRunEnd;
}

/**
 * A foreground Bash call, movable to the background while it runs (R-T5): the Agent SDK's
 * `backgroundTasks()` (Claude Code's Ctrl+B) answers the call at once with the id of a background
 * shell, and the same process — not a new run — goes on there: the output it printed so far and
 * from then on goes to the shell's file, its end is a task notification, TaskStop and stopTask()
 * reach it, the turn's interrupt no longer does, and its timeout becomes a background command's
 * (BACKGROUND_DEFAULT_TIMEOUT_MS from the move). Not moved, it is an ordinary foreground call.
 */
export function runMovableCommand<Outcome>(
  input: BackgroundBashInput,
  context: ToolUseContext & { readonly toolUseId: string },
  spec: MovableCommandSpec<Outcome>,
): Promise<ToolResult> {
  // The turn's interrupt reaches the command only while it is the turn's (unlinked when it moves).
  const abortController = new AbortController();
  const turnSignal = context.abortController.signal;
  const onTurnAbort = () => abortController.abort(turnSignal.reason);
  if (turnSignal.aborted) onTurnAbort();
  else turnSignal.addEventListener("abort", onTurnAbort, { once: true });
  const unlink = () => turnSignal.removeEventListener("abort", onTurnAbort);

  // What it printed before a move, for the shell's file; bounded as that file is.
  const early: string[] = [];
  let earlyBytes = 0;
  let earlyDropped = 0;
  let forward: ((chunk: string) => void) | undefined;
  let retime: ((timeoutMs: number) => void) | undefined;
  const running = spec.run({
    timeoutMs: spec.timeoutMs,
    signal: abortController.signal,
    onOutput: (chunk) => {
      if (forward !== undefined) return forward(chunk);
      const bytes = Buffer.byteLength(chunk);
      if (earlyBytes + bytes > BACKGROUND_OUTPUT_MAX_BYTES) earlyDropped += bytes;
      else {
        early.push(chunk);
        earlyBytes += bytes;
      }
    },
    onTimer: (set) => {
      retime = set;
    },
  });

  const shells = backgroundShellsFor(context.agentState);
  return new Promise<ToolResult>((resolve, reject) => {
    const unregister = shells.movable(context.toolUseId, () => {
      const started = shells.start({
        command: input.command,
        description: input.description,
        toolUseId: context.toolUseId,
        timeoutMs: BACKGROUND_DEFAULT_TIMEOUT_MS,
        droppedBytes: earlyDropped,
        run: (limits) => {
          // TaskStop, stopTask() and the owner's end stop it from now on.
          limits.signal.addEventListener("abort", () => abortController.abort(), { once: true });
          for (const chunk of early.splice(0)) limits.onOutput(chunk);
          forward = limits.onOutput;
          retime?.(limits.timeoutMs);
          return running.then(spec.end);
        },
      });
      if (typeof started === "string") return false;
      unlink();
      resolve(movedResult(started, earlyBytes > 0 || earlyDropped > 0));
      return true;
    });
    running.then(
      (outcome) => {
        unregister();
        unlink();
        resolve(spec.result(outcome));
      },
      (error: unknown) => {
        unregister();
        unlink();
        reject(error);
      },
    );
  });
}

/** Claude Code's answer to a Bash call the user moved to the background (Ctrl+B), with its structured output. */
function movedResult(shell: BackgroundShellInfo, printed: boolean): ToolResult {
  return {
    content: [
      `Command was manually backgrounded by user with ID: ${shell.id}. Output is being written to: ${shell.outputFile}.`,
      "You will be notified when it completes. To check interim output, use Read on that file path.",
      ...(printed
        ? []
        : [
            "No output had been read from it when it was moved. A program that buffers its output, or a pipe into one such as tail, can keep the output file empty until the command finishes.",
          ]),
    ].join(" "),
    isError: false,
    output: {
      stdout: "",
      stderr: "",
      interrupted: false,
      backgroundTaskId: shell.id,
      backgroundedByUser: true,
    },
  };
}
