/**
 * Test helpers of `@forkloop/cli` (`@forkloop/cli/testing`): the CLI in-process
 * (`runCliInProcess`, `startCliInProcess`, `withSim`) for tests where the process is not the
 * subject, the built binary spawned (`runCli`, `startCli`, `withSimProcess`) where it is, and what
 * both share (scenario files, stream-json lines, where a test's state goes, a real Redis).
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  batchesDir,
  projectState,
  type StreamJsonLine,
  sessionsDir,
  streamJsonLineSchema,
} from "@forkloop/sdk";

// A real Redis and hosts on a network are the queue backend's fixtures (@forkloop/batch/testing).
export {
  canMakeHosts,
  type NetworkHosts,
  type NetworkHostsOptions,
  type RedisServer,
  type RedisServerOptions,
  startNetworkHosts,
  startRedisServer,
} from "@forkloop/batch/testing";
export { REFUSED_CLAUDE_FLAGS, type RefusedClaudeFlag } from "../claude-code-flags.js";
export {
  type InProcessCli,
  type InProcessCliOptions,
  runCliInProcess,
  startCliInProcess,
  startSimInProcess,
  withSim,
} from "./in-process.js";
export type { SimHandle, SimRequestRecord } from "./sim-handle.js";
export {
  CLI_PATH,
  type CliOptions,
  type CliResult,
  cliEnv,
  runCli,
  type SimProcess,
  type StartedCli,
  startCli,
  startSimProcess,
  startTracked,
  stopStarted,
  waitForOutput,
  withSimProcess,
} from "./spawned.js";

/** `items.jsonl` in `dir` with `count` items, "task 1" … "task N" (one JSON string per line). */
export async function writeTaskItems(dir: string, count: number): Promise<void> {
  const lines = Array.from({ length: count }, (_, index) => JSON.stringify(`task ${index + 1}`));
  await writeFile(join(dir, "items.jsonl"), `${lines.join("\n")}\n`);
}

/** Writes a scenario file whose unmatched requests get `fallbackText`; returns its path. */
export async function writeScenario(
  path: string,
  rules: readonly Record<string, unknown>[],
  fallbackText: string,
): Promise<string> {
  await writeFile(
    path,
    JSON.stringify({ rules, fallback: { content: [{ type: "text", text: fallbackText }] } }),
  );
  return path;
}

/** A `--output-format stream-json` stdout as validated lines (a line off the schema throws). */
export function streamJsonLines(stdout: string): StreamJsonLine[] {
  return stdout
    .trim()
    .split("\n")
    .map((line) => streamJsonLineSchema.parse(JSON.parse(line)));
}

/**
 * Where a test's batch keeps its state: the project's state directory under the user's forkloop
 * directory (state-dirs.ts), HOME being the test's directory as `cliEnv` sets it.
 */
export function batchStateDir(cwd: string, id: string, home = cwd): string {
  return join(batchesDir(projectState({ cwd, env: { HOME: home } })), id);
}

/** Where a test's `forkloop run` sessions go, as `batchStateDir` finds batches. */
export function sessionsStateDir(cwd: string, home = cwd): string {
  return sessionsDir(projectState({ cwd, env: { HOME: home } }));
}
