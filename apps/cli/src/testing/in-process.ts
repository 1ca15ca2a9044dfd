/**
 * The CLI run in the test's own process, through `runCommandLine(argv, context)`: the same
 * commands, flags, output and exit codes as the built binary, without a node process (and its
 * module loading) per call. Use it wherever the process itself is not the subject; spawn the built
 * CLI (`runCli`, `startCli`) only where signals, the real process's exit, installs or killed
 * workers are.
 */
import { EventEmitter } from "node:events";
import { Readable, Writable } from "node:stream";
import type { SharedClock } from "@forkloop/orchestrator";
import { runCommandLine } from "../cli.js";
import type { CommandContext } from "../command-context.js";
import { type SimHandle, simHandle, withStopped } from "./sim-handle.js";
import { type CliOptions, type CliResult, cliEnv } from "./spawned.js";

export interface InProcessCliOptions extends CliOptions {
  /** Aborts the command as the first Ctrl+C would (the context's signal). */
  readonly signal?: AbortSignal;
  /** false: output without R-S14's terminal escaping, as it printed before (the controls of its tests). */
  readonly terminalViews?: boolean;
  /** R-R11: the clock the command's model requests wait on (e.g. `skipAheadClock()`). */
  readonly clock?: SharedClock;
}

/** A command started in this process: read its output while it runs, stop it, await its end. */
export interface InProcessCli {
  readonly exited: Promise<CliResult>;
  stdout(): string;
  stderr(): string;
  /** Resolves once `read()` satisfies `test`; rejects if the command ends first. */
  waitFor(read: () => string, test: (text: string) => boolean): Promise<string>;
  /** Asks the command to stop, as the first Ctrl+C does, and waits for its end. */
  stop(): Promise<CliResult>;
}

/** A writable stream that keeps what is written, as a pipe to the test would. */
function collector(onWrite: (text: string) => void): Writable {
  return new Writable({
    decodeStrings: false,
    write(chunk: Buffer | string, _encoding, done) {
      onWrite(typeof chunk === "string" ? chunk : chunk.toString("utf8"));
      done();
    },
  });
}

/** Starts `forkloop <args>` in this process, with the environment `runCli` would give the binary. */
export function startCliInProcess(args: readonly string[], options: InProcessCliOptions): InProcessCli {
  const output = new EventEmitter();
  let stdout = "";
  let stderr = "";
  let ended = false;
  const stop = new AbortController();
  options.signal?.addEventListener("abort", () => stop.abort(), { once: true });
  const context: CommandContext = {
    stdout: collector((text) => {
      stdout += text;
      output.emit("data");
    }),
    stderr: collector((text) => {
      stderr += text;
      output.emit("data");
    }),
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)], {
      objectMode: false,
    }),
    env: cliEnv(options.env, options.cwd),
    cwd: options.cwd,
    signal: stop.signal,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
  };
  const exited = runCommandLine(args, context, { terminalViews: options.terminalViews ?? true }).then(
    (code) => {
      ended = true;
      output.emit("end");
      return { code, signal: null, stdout, stderr } satisfies CliResult;
    },
  );
  const waitFor = (read: () => string, test: (text: string) => boolean) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (test(read())) {
          cleanup();
          resolve(read());
        } else if (ended) {
          cleanup();
          reject(new Error(`the command ended before the expected output; got:\n${read()}`));
        }
      };
      const cleanup = () => {
        output.off("data", check);
        output.off("end", check);
      };
      output.on("data", check);
      output.on("end", check);
      check();
    });
  return {
    exited,
    stdout: () => stdout,
    stderr: () => stderr,
    waitFor,
    stop: () => {
      stop.abort();
      return exited;
    },
  };
}

/** Runs `forkloop <args>` in this process to its end: `runCli`'s result, `signal` always null. */
export function runCliInProcess(args: readonly string[], options: InProcessCliOptions): Promise<CliResult> {
  return startCliInProcess(args, options).exited;
}

/** `forkloop sim` started in this process: its URL, the env that points the CLI at it, its request log. */
export async function startSimInProcess(cwd: string, args: readonly string[] = []): Promise<SimHandle> {
  const sim = startCliInProcess(["sim", "--port", "0", ...args], { cwd });
  await sim.waitFor(sim.stderr, (text) => text.includes("listening"));
  return simHandle(sim.stdout(), () => sim.stop());
}

/** Runs `body` against a simulator started in this process (with `forkloop sim`'s `args`) and always stops it. */
export async function withSim<T>(
  cwd: string,
  args: readonly string[],
  body: (sim: SimHandle) => Promise<T>,
): Promise<T> {
  return withStopped(await startSimInProcess(cwd, args), body);
}
