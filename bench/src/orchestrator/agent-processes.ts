import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { SubAgentTask } from "@forkloop/orchestrator";

const orchestratorDist = dirname(fileURLToPath(import.meta.resolve("@forkloop/orchestrator")));
const runnerModule = pathToFileURL(join(orchestratorDist, "sub-agent-runner.js")).href;

/** The process-per-agent baseline: a fresh Node process runs the same runSubAgent() once. */
const CHILD = `
import Anthropic from "@anthropic-ai/sdk";
import { runSubAgent } from ${JSON.stringify(runnerModule)};
import { readFileSync } from "node:fs";
const task = JSON.parse(readFileSync(process.argv[1], "utf8"));
const client = new Anthropic({ apiKey: "bench-key", baseURL: process.env.FORKLOOP_BENCH_URL });
await runSubAgent(task, { client, signal: new AbortController().signal, emit() {},
  async callParentTool() { return { content: "unavailable", isError: true }; },
  steeringQueue: [], cancelled: () => false });
`;

export function spawnAgentProcess(task: SubAgentTask, url: string, dir: string): ChildProcess {
  // The task is ~100 KB of JSON (tools, system prompt): too big for an environment variable.
  const taskFile = join(dir, `${task.id}.json`);
  writeFileSync(taskFile, JSON.stringify(task));
  // cwd = the orchestrator package, so the child resolves the SDK from the workspace.
  const child = spawn(process.execPath, ["--input-type=module", "-e", CHILD, taskFile], {
    cwd: orchestratorDist,
    env: { ...process.env, FORKLOOP_BENCH_URL: url },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return child;
}

export function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) resolve();
    else child.on("exit", () => resolve());
  });
}
