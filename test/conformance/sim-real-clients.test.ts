import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { isolatedEnv, makeRunDirs, type RunDirs } from "./support/isolated-run.js";
import { ensureNewestSdkInstalled, ensurePeersInstalled, newestSdk, peers } from "./support/peers.js";
import { type GroupRun, runInGroup } from "./support/run-in-group.js";

/**
 * R-D2 "done when": today's real clients, installed at test time and pinned (Claude Code CLI
 * 2.1.332, the Agent SDK 0.3.333 with the Claude Code 2.1.333 it runs, the newest
 * @anthropic-ai/sdk's tool runner), complete whole sessions against the simulator as users run
 * it — the built-in policy answering — with no refused request in its log. A refusal the API
 * would not give breaks a client or sends it down its fallback path (Claude Code retries without
 * the refused field), which the session's result alone would not show.
 */

/** Generous: a loaded 2-core machine runs several of these processes at once. */
const SESSION_TIMEOUT_MS = 150_000;
const FILES = {
  "src/a.ts": "// The first constant.\nexport const a = 1;\n",
  "src/b.ts": "// Returns two.\nexport function b() {\n  return 2;\n}\n",
};

let sim: Simulator;
/** What each test started, ended after it. */
const started: { sims: Simulator[]; dirs: RunDirs[] } = { sims: [], dirs: [] };

beforeAll(() => {
  ensurePeersInstalled();
  ensureNewestSdkInstalled();
}, 600_000);
afterEach(async () => {
  for (const each of started.sims.splice(0)) await each.close();
  for (const each of started.dirs.splice(0)) await rm(each.root, { recursive: true, force: true });
});

/** The simulator as users run it (the built-in policy answers), and the run's directories. */
async function startSession(name: string): Promise<RunDirs> {
  sim = await startSimulator();
  started.sims.push(sim);
  const dirs = await makeRunDirs(name, FILES);
  started.dirs.push(dirs);
  return dirs;
}

/** Every request the session sent, and those the simulator refused (none may be). */
function refusedRequests(): string[] {
  return sim
    .requests()
    .filter((record) => record.status >= 400)
    .map((record) => `${record.status} ${record.path}: ${record.error?.message ?? ""}`);
}

/** Runs a peer process (in its own group) with the isolated environment. */
function runPeer(command: string, args: readonly string[], run: RunDirs): Promise<GroupRun> {
  const env = isolatedEnv(run, { url: sim.url, apiKey: "sk-real-client-session" });
  return runInGroup(command, args, { cwd: run.work, env, timeoutMs: SESSION_TIMEOUT_MS });
}

/** Every request body the simulator was sent (tool results hold what the client's tools returned). */
function everythingSent(): string {
  return sim
    .requests()
    .map((record) => record.rawBody)
    .join("\n");
}

describe("R-D2: today's real clients complete sessions on the simulator with no refused request", () => {
  it(
    "R-D2: Claude Code CLI 2.1.332 fans two files out to background sub-agents and reads their completion notices, every request accepted",
    async () => {
      const dirs = await startSession("cc-fan-out");
      const run = await runPeer(
        peers.claudeCodeBinary,
        ["-p", "Summarize src/a.ts and src/b.ts", "--output-format", "json"],
        dirs,
      );
      expect(run.exitCode, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as {
        is_error: boolean;
        result: string;
        subagent_stats: { spawned: number; completed: number };
      };
      expect(result.is_error).toBe(false);
      expect(result.subagent_stats).toMatchObject({ spawned: 2, completed: 2 });
      // The notices come one at a time or together, as the sub-agents happen to finish.
      expect(result.result).toMatch(/background tasks? reported/);
      // The sub-agents read the files (their Read results reached the simulator).
      expect(everythingSent()).toContain("export const a = 1;");
      expect(everythingSent()).toContain("export function b()");
      expect(refusedRequests()).toEqual([]);
    },
    SESSION_TIMEOUT_MS + 30_000,
  );

  it(
    "R-D2: the Agent SDK 0.3.333 renames a function (Read, then Edit under acceptEdits), every request accepted",
    async () => {
      const dirs = await startSession("agent-sdk-rename");
      const program = join(dirs.root, "program.mjs");
      await writeFile(
        program,
        [
          `import { query } from ${JSON.stringify(pathToFileURL(peers.agentSdkEntry).href)};`,
          "let result;",
          'const options = { cwd: process.cwd(), permissionMode: "acceptEdits", allowedTools: ["Read", "Edit"] };',
          "for await (const message of query({ prompt: process.argv[2], options })) {",
          '  if (message.type === "result") result = message;',
          "}",
          "process.stdout.write(JSON.stringify(result));",
        ].join("\n"),
      );
      const run = await runPeer(
        process.execPath,
        [program, "Rename the function b to bee in src/b.ts"],
        dirs,
      );
      expect(run.exitCode, run.stderr).toBe(0);
      const result = JSON.parse(run.stdout) as { subtype: string; is_error: boolean; result: string };
      expect(result).toMatchObject({ subtype: "success", is_error: false });
      expect(result.result).toContain("Renamed b to bee in src/b.ts.");
      expect(await readFile(join(dirs.work, "src/b.ts"), "utf8")).toContain("export function bee()");
      expect(refusedRequests()).toEqual([]);
    },
    SESSION_TIMEOUT_MS + 30_000,
  );

  for (const { sdk, stream } of [
    { sdk: "newest", stream: false },
    { sdk: "newest", stream: true },
    { sdk: "pinned", stream: false },
  ] as const) {
    it(`R-D2: @anthropic-ai/sdk's beta.messages.toolRunner (${sdk}, ${stream ? "streaming" : "not streaming"}) runs a tool and ends over a message thread, every request accepted`, async () => {
      await startSession("tool-runner");
      const module =
        sdk === "newest"
          ? {
              Anthropic: (await import(pathToFileURL(newestSdk.entry).href)).default,
              betaTool: (await import(pathToFileURL(newestSdk.betaJsonSchemaHelpers).href)).betaTool,
            }
          : {
              Anthropic: (await import("@anthropic-ai/sdk")).default,
              betaTool: (await import("@anthropic-ai/sdk/helpers/beta/json-schema")).betaTool,
            };
      if (sdk === "newest") {
        expect(JSON.parse(await readFile(newestSdk.packageJson, "utf8")).version).toBe("1.15.0");
      }
      const client = new module.Anthropic({ apiKey: "sk-tool-runner", baseURL: sim.url, maxRetries: 0 });
      const read = module.betaTool({
        name: "Read",
        description: "Reads a file",
        inputSchema: {
          type: "object",
          properties: { file_path: { type: "string" } },
          required: ["file_path"],
        },
        run: ({ file_path }: { file_path: string }) =>
          file_path === "src/a.ts" ? FILES["src/a.ts"] : `no such file: ${file_path}`,
      });
      const runner = client.beta.messages.toolRunner({
        model: "claude-opus-5-5",
        max_tokens: 4096,
        messages: [{ role: "user", content: "Summarize src/a.ts" }],
        tools: [read],
        stream,
      });
      const stops: string[] = [];
      for await (const turn of runner) {
        const message = stream ? await turn.finalMessage() : turn;
        stops.push(message.stop_reason);
      }
      const final = await runner.done();
      expect(stops).toEqual(["tool_use", "end_turn"]);
      expect(JSON.stringify(final.content)).toContain("Exported names: a");
      // Message threads, not a fallback to whole conversations: the SDK falls back only after a
      // thread_unsupported_request refusal.
      const threads = sim.requests().map((record) => JSON.parse(record.rawBody).thread?.type);
      expect(threads).toEqual(["create", "continue"]);
      expect(refusedRequests()).toEqual([]);
    });
  }
});
