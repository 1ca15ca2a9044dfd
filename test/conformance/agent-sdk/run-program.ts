import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import type { RequestRecord } from "@forkloop/sim";
import { isolatedEnv, makeRunDirs, type RunDirs } from "../support/isolated-run.js";
import { runInGroup } from "../support/run-in-group.js";
import type { ScriptedServer } from "../support/scripted-server.js";
import { type ProgramCase, scriptOf } from "./program-case.js";
import type { TraceEvent } from "./trace.js";

export type Side = "agent-sdk" | "forkloop";

/** Everything one side's run of one program left to compare. */
export interface ProgramRun {
  side: Side;
  dirs: RunDirs;
  events: TraceEvent[];
  stdout: string;
  stderr: string;
  exitCode: number | null;
  timedOut: boolean;
  requests: RequestRecord[];
  scriptFailures: string[];
  /** Every file under the run's home, relative to it (the sessions' listing). */
  homeFiles: string[];
}

/** Generous: a loaded 2-core machine runs six of these processes at once. */
const DEFAULT_TIMEOUT_MS = 150_000;
const INSTRUMENT = join(import.meta.dirname, "instrument", "register.mjs");
export const PROGRAMS_BUILD = join(import.meta.dirname, ".build", "programs");

/** Runs a compiled corpus program once, on one side, against the shared scripted server. */
export async function runProgram(options: {
  name: string;
  side: Side;
  sdkEntry: string;
  server: ScriptedServer;
  programCase: ProgramCase;
  parentDir: string;
}): Promise<ProgramRun> {
  const { name, side, programCase } = options;
  const dirs = await makeRunDirs(`${name}-${side}`, programCase.files, options.parentDir);
  const client = options.server.client(`${name}-${side}`, scriptOf(programCase), dirs.work);
  const trace = join(dirs.root, "trace.jsonl");
  const env = {
    ...isolatedEnv(dirs, { url: options.server.url, apiKey: client.apiKey }),
    CONFORMANCE_SDK_ENTRY: options.sdkEntry,
    CONFORMANCE_PROGRAMS_DIR: PROGRAMS_BUILD,
    CONFORMANCE_TRACE: trace,
  };
  const program = join(PROGRAMS_BUILD, name, "program.js");
  const run = await runInGroup(process.execPath, ["--import", INSTRUMENT, program], {
    cwd: dirs.work,
    env,
    timeoutMs: programCase.timeoutMs ?? DEFAULT_TIMEOUT_MS,
  });
  return {
    side,
    dirs,
    events: await readTrace(trace),
    stdout: run.stdout,
    stderr: run.stderr,
    exitCode: run.exitCode,
    timedOut: run.timedOut,
    requests: client.requests(),
    scriptFailures: client.scriptFailures(),
    homeFiles: await listFiles(dirs.home),
  };
}

async function readTrace(path: string): Promise<TraceEvent[]> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as TraceEvent);
}

async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}
