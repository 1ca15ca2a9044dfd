import { spawn } from "node:child_process";
import { createProcessMark, endMarked } from "@forkloop/loop-core";
import { HeadTailBuffer } from "./output-cap.js";

export interface ProcessGroupRun {
  /** null when the shell was killed by a signal. */
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly timedOut: boolean;
  readonly aborted: boolean;
  /**
   * With `startedFd`: whether the launcher said it was about to run the command (a write on the
   * descriptor after its inputs). false: the launcher failed before the command could start.
   */
  readonly started?: boolean;
}

export interface ProcessGroupOptions {
  readonly cwd: string;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Written to stdin, which is then closed; without it stdin is /dev/null so nothing waits on a tty. */
  readonly stdin?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Per stream; head and tail are kept (HeadTailBuffer). */
  readonly maxOutputChars: number;
  /** A program and its arguments that run `bash -c command` (the bubblewrap sandbox, R-S6). */
  readonly launcher?: readonly string[];
  /** Data the launcher reads from descriptors FIRST_INPUT_FD, FIRST_INPUT_FD + 1, … (bwrap's seccomp program). */
  readonly inputs?: readonly Buffer[];
  /**
   * One more descriptor, after the inputs (FIRST_INPUT_FD + inputs.length), that the launcher
   * writes to just before it runs the command (`started` in the result).
   */
  readonly startedFd?: boolean;
  /** Every chunk as it arrives, in arrival order across both streams (a background shell's output file). */
  readonly onOutput?: (chunk: string, stream: "stdout" | "stderr") => void;
  /**
   * Handed, once the command started, a function that restarts its timeout with a new length from
   * now: a foreground call moved to the background takes the background's limit (R-T5).
   */
  readonly onTimer?: (retime: (timeoutMs: number) => void) => void;
}

/** Descriptor 3 carries the process mark (marked-processes.ts); the launcher's inputs follow it. */
export const FIRST_INPUT_FD = 4;

/** Time a group gets between SIGTERM and SIGKILL, to flush and clean up. */
const KILL_GRACE_MS = 500;
/** After the shell exits, how long we wait for its pipes to drain before giving up on them. */
const DRAIN_TIMEOUT_MS = 2_000;

/**
 * Runs `bash -c command` as the leader of a new process group (`detached: true`), so that a
 * timeout, an abort or the end of the command can signal the WHOLE group with `kill(-pid)`:
 * children and grandchildren (`sleep 1000 &`, `npm test` spawning workers) die with it and no
 * orphan outlives the call (R-T3). Background jobs therefore end when the command ends. What
 * left the group (`setsid`, a double fork) is found by the call's marks and ended too, before the
 * call returns (marked-processes.ts).
 */
export function runInProcessGroup(command: string, options: ProcessGroupOptions): Promise<ProcessGroupRun> {
  return new Promise((resolvePromise, rejectPromise) => {
    if (options.signal?.aborted === true) {
      resolvePromise({
        exitCode: null,
        signal: null,
        stdout: "",
        stderr: "",
        timedOut: false,
        aborted: true,
      });
      return;
    }
    const [file = "bash", ...args] = [...(options.launcher ?? []), "bash", "-c", command];
    const mark = createProcessMark();
    const child = spawn(file, args, {
      cwd: options.cwd,
      env: { ...(options.env ?? process.env), ...mark.env },
      detached: true,
      stdio: [
        options.stdin === undefined ? "ignore" : "pipe",
        "pipe",
        "pipe",
        mark.fd,
        ...(options.inputs ?? []).map(() => "pipe" as const),
        ...(options.startedFd === true ? ["pipe" as const] : []),
      ],
    });
    mark.release(child.pid);
    (options.inputs ?? []).forEach((input, index) => {
      const stream = child.stdio[FIRST_INPUT_FD + index] as NodeJS.WritableStream | null | undefined;
      // A launcher that fails before reading makes the write fail with EPIPE: its exit says why.
      stream?.on("error", () => {});
      stream?.end(input);
    });
    let started = false;
    if (options.startedFd === true) {
      const stream = child.stdio[FIRST_INPUT_FD + (options.inputs ?? []).length] as
        | NodeJS.ReadableStream
        | null
        | undefined;
      stream?.on("error", () => {});
      stream?.on("data", () => {
        started = true;
      });
    }
    const stdout = new HeadTailBuffer(options.maxOutputChars);
    const stderr = new HeadTailBuffer(options.maxOutputChars);
    const onOutput = options.onOutput;
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      stdout.append(chunk);
      onOutput?.(chunk, "stdout");
    });
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr.append(chunk);
      onOutput?.(chunk, "stderr");
    });
    if (options.stdin !== undefined && child.stdin) {
      // A hook that exits without reading its stdin makes the write fail with EPIPE: not an error.
      child.stdin.on("error", () => {});
      child.stdin.end(options.stdin);
    }

    let timedOut = false;
    let aborted = false;
    const killGroup = (): void => {
      signalGroup(child.pid, "SIGTERM");
      setTimeout(() => signalGroup(child.pid, "SIGKILL"), KILL_GRACE_MS).unref();
    };
    const onTimeout = (): void => {
      timedOut = true;
      killGroup();
    };
    let timer = setTimeout(onTimeout, options.timeoutMs);
    /** Set once the shell exited or could not start: no timer runs any more. */
    let over = false;
    const onAbort = (): void => {
      aborted = true;
      killGroup();
    };
    options.signal?.addEventListener("abort", onAbort, { once: true });

    child.once("error", (error) => {
      over = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      void endMarked(mark).then(() => rejectPromise(error));
    });
    let exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;
    // Done once the marked processes are ended and the pipes drained (or the drain timed out).
    let swept = false;
    let drained = false;
    const finish = (): void => {
      if (settled || exit === undefined || !swept || !drained) return;
      settled = true;
      child.stdout?.destroy();
      child.stderr?.destroy();
      resolvePromise({
        exitCode: exit.code,
        signal: exit.signal,
        stdout: stdout.toString(),
        stderr: stderr.toString(),
        timedOut,
        aborted,
        ...(options.startedFd === true ? { started } : {}),
      });
    };
    child.once("exit", (code, signal) => {
      exit = { code, signal };
      over = true;
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      // Whatever the command left running in its group (background jobs) ends with it, and so
      // does what escaped the group, found by its marks.
      killGroup();
      void endMarked(mark).then(() => {
        swept = true;
        // A process out of the marks' reach may hold the pipes open: do not wait for it forever.
        setTimeout(() => {
          drained = true;
          finish();
        }, DRAIN_TIMEOUT_MS).unref();
        finish();
      });
    });
    options.onTimer?.((timeoutMs) => {
      if (over) return;
      clearTimeout(timer);
      timer = setTimeout(onTimeout, timeoutMs);
    });
    // "close" comes after "exit" once both pipes are drained.
    child.once("close", () => {
      drained = true;
      finish();
    });
  });
}

function signalGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}
