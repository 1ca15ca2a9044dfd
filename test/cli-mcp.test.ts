import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  batchStateDir,
  runCliInProcess,
  sessionsStateDir,
  startCliInProcess,
  streamJsonLines,
  withSim,
  writeScenario,
} from "@forkloop/cli/testing";
import {
  everythingServerConfig,
  filesystemServerConfig,
  memoryServerConfig,
  type RunningHttpServer,
  realServerScript,
  startEverythingHttp,
  TEST_PNG_BASE64,
  testServerConfig,
} from "@forkloop/mcp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  bodyOf,
  toolCall as call,
  filesystemReadText,
  resultText,
  toolResults,
} from "./support/sim-tool-results.js";

// R-M1 through the CLI: MCP servers the project did not write (server-memory,
// server-filesystem, server-everything over Streamable HTTP, from npm) and the repo's own test
// server, configured as Claude Code configures them, called by a scripted model in the main
// agent, in an Agent sub-agent (a worker thread; the call runs in the parent), and in batch items.

let root: string;
let http: RunningHttpServer;
let sse: RunningHttpServer;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-cli-mcp-"));
  [http, sse] = await Promise.all([startEverythingHttp("streamableHttp"), startEverythingHttp("sse")]);
}, 60_000);
afterAll(async () => {
  await Promise.all([http?.close(), sse?.close()]);
  await rm(root, { recursive: true, force: true });
});

const step = (querySource: string, turn: number, ...content: Record<string, unknown>[]) => ({
  match: { querySource, turn },
  reply: { content },
});

/** The pid of the server-filesystem process serving `dir` (its arguments name both). */
function serverPid(dir: string): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let args: string[];
    try {
      args = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // it ended while we looked
    }
    if (args.includes(realServerScript("server-filesystem")) && args.includes(dir)) return Number(entry);
  }
  return undefined;
}

/** `${NAME}`, the config's own expansion syntax. */
const envRef = (name: string) => `\${${name}}`;

async function project(name: string): Promise<string> {
  const dir = join(root, name);
  await mkdir(dir, { recursive: true });
  return dir;
}

async function writeMcpConfig(path: string, servers: Record<string, unknown>): Promise<string> {
  await writeFile(path, JSON.stringify({ mcpServers: servers }));
  return path;
}

describe("R-M1: MCP servers in `forkloop run` and `forkloop batch` (CLI, real servers)", () => {
  it("R-M1: forkloop run — the model calls tools of server-memory (.mcp.json, trusted), server-filesystem and server-everything over Streamable HTTP, legacy SSE and stdio (--mcp-config) and gets their real results; servers that fail to start (the test server, server-filesystem without its directory) are `failed` in system/init with their reasons on stderr; a server killed mid-call gives is_error and is restarted once; results over MAX_MCP_OUTPUT_TOKENS (the test server's, server-filesystem's) are saved to the session's state", async () => {
    const dir = await project("run");
    await writeFile(join(dir, "notes.txt"), "forkloop was here\n");
    await writeMcpConfig(join(dir, ".mcp.json"), { memory: memoryServerConfig(join(dir, "memory.jsonl")) });
    await writeMcpConfig(join(dir, "servers.json"), {
      files: filesystemServerConfig(dir),
      everything: { type: "http", url: envRef("EVERYTHING_URL") },
      legacy: { type: "sse", url: `${envRef("EVERYTHING_SSE_URL")}` },
      "everything-stdio": everythingServerConfig(),
      test: testServerConfig(),
      broken: testServerConfig("--fail-start"),
      // A real server that fails to start: server-filesystem refuses a directory that is not there.
      nodir: filesystemServerConfig(join(dir, "no-such-dir")),
    });
    await writeFile(join(dir, "big.txt"), "forkloop ".repeat(2_500)); // 22,500 characters
    const scenario = await writeScenario(
      join(dir, "scenario.json"),
      [
        step(
          "sdk",
          0,
          call("toolu_create", "mcp__memory__create_entities", {
            entities: [{ name: "forkloop", entityType: "project", observations: ["speaks MCP"] }],
          }),
          call("toolu_read", "mcp__files__read_text_file", { path: join(dir, "notes.txt") }),
          call("toolu_echo", "mcp__everything__echo", { message: "over http" }),
          call("toolu_sse", "mcp__legacy__echo", { message: "over sse" }),
          call("toolu_sum", "mcp__everything-stdio__get-sum", { a: 2, b: 40 }),
        ),
        step(
          "sdk",
          1,
          call("toolu_big", "mcp__test__big", { chars: 20_000 }),
          call("toolu_big_file", "mcp__files__read_text_file", { path: join(dir, "big.txt") }),
        ),
        step("sdk", 2, call("toolu_crash", "mcp__test__crash")),
        step("sdk", 3, call("toolu_pid", "mcp__test__pid")),
        step("sdk", 4, { type: "text", text: "All MCP calls made." }),
      ],
      "(unscripted)",
    );
    await withSim(dir, ["--scenario", scenario], async (sim) => {
      const run = await runCliInProcess(
        [
          "run",
          "Use the MCP tools.",
          "--output-format",
          "stream-json",
          "--mcp-config",
          "servers.json",
          "--trust-project",
          "--allowed-tools",
          "mcp__memory,mcp__test__*",
        ],
        {
          cwd: dir,
          env: {
            ...sim.env,
            EVERYTHING_URL: http.url,
            EVERYTHING_SSE_URL: sse.url,
            MAX_MCP_OUTPUT_TOKENS: "3000",
          },
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const lines = streamJsonLines(run.stdout);
      const init = lines.find((line) => line.type === "system" && line.subtype === "init");
      expect(init && "mcp_servers" in init ? init.mcp_servers : undefined).toEqual([
        // The Agent SDK's source: the project's .mcp.json scope, or --mcp-config's (dynamic).
        { name: "memory", status: "connected", source: "project" },
        { name: "files", status: "connected", source: "dynamic" },
        { name: "everything", status: "connected", source: "dynamic" },
        { name: "legacy", status: "connected", source: "dynamic" },
        { name: "everything-stdio", status: "connected", source: "dynamic" },
        { name: "test", status: "connected", source: "dynamic" },
        { name: "broken", status: "failed", source: "dynamic" },
        { name: "nodir", status: "failed", source: "dynamic" },
      ]);
      expect(run.stderr).toContain('MCP server "broken" failed');
      expect(run.stderr).toContain("refusing to start (--fail-start)");
      expect(run.stderr).toMatch(
        /MCP server "nodir" failed.*None of the specified directories are accessible/s,
      );
      expect(lines.at(-1)).toMatchObject({ type: "result", result: "All MCP calls made." });

      const records = (await sim.requests()).filter((record) => record.path === "/v1/messages");
      const offered = bodyOf(records[0]!).tools.map((tool) => tool.name);
      expect(offered).toEqual(expect.arrayContaining(["mcp__memory__read_graph", "mcp__everything__echo"]));
      expect(offered.some((name) => name.startsWith("mcp__broken__"))).toBe(false);
      const results = toolResults(records);
      // The real servers' own answers reached the model.
      expect(results.get("toolu_create")?.is_error).not.toBe(true);
      expect(resultText(results.get("toolu_create"))).toContain("speaks MCP");
      expect(await readFile(join(dir, "memory.jsonl"), "utf8")).toContain('"name":"forkloop"');
      expect(resultText(results.get("toolu_read"))).toBe(filesystemReadText("forkloop was here\n"));
      expect(resultText(results.get("toolu_echo"))).toBe("Echo: over http");
      expect(resultText(results.get("toolu_sse"))).toBe("Echo: over sse");
      expect(resultText(results.get("toolu_sum"))).toContain("42");
      // Over the cap (20,000 characters ≈ 5,000 tokens > 3,000): the model gets a path and a preview.
      const big = resultText(results.get("toolu_big"));
      const session = init?.session_id ?? "";
      const savedDir = join(sessionsStateDir(dir), session, "mcp-results");
      const saved = await readdir(savedDir);
      expect(saved).toHaveLength(2);
      const savedFile = (tool: string) => join(savedDir, saved.find((name) => name.includes(tool))!);
      expect(big).toContain(savedFile("mcp__test__big"));
      expect(big.length).toBeLessThan(5_000);
      expect((await readFile(savedFile("mcp__test__big"), "utf8")).length).toBe(20_000);
      // server-filesystem's own result over the cap: saved whole, the model gets its path.
      const bigFile = resultText(results.get("toolu_big_file"));
      expect(results.get("toolu_big_file")?.is_error).not.toBe(true);
      expect(bigFile).toContain(savedFile("mcp__files__read_text_file"));
      expect(bigFile.length).toBeLessThan(5_000);
      expect(await readFile(savedFile("mcp__files__read_text_file"), "utf8")).toBe(
        filesystemReadText("forkloop ".repeat(2_500)),
      );
      // Killed in the middle of the call: an is_error result, then the restarted server answers.
      expect(results.get("toolu_crash")?.is_error).toBe(true);
      expect(run.stderr).toContain('MCP server "test" stopped');
      expect(run.stderr).toContain('MCP server "test" restarted');
      expect(resultText(results.get("toolu_pid"))).toMatch(/^\d+$/);
    });
  });

  it("R-M1: server-filesystem killed between two calls of a run is restarted once: the next call gets the file from the new process", async () => {
    const dir = await project("killed");
    await writeFile(join(dir, "notes.txt"), "still readable\n");
    const read = (id: string) => call(id, "mcp__files__read_text_file", { path: join(dir, "notes.txt") });
    const scenario = await writeScenario(
      join(dir, "scenario.json"),
      [
        step("sdk", 0, read("toolu_before")),
        step("sdk", 1, call("toolu_wait", "mcp__test__slow", { ms: 4_000 })),
        step("sdk", 2, read("toolu_after")),
        step("sdk", 3, { type: "text", text: "Read it twice." }),
      ],
      "(unscripted)",
    );
    const config = JSON.stringify({
      mcpServers: { files: filesystemServerConfig(dir), test: testServerConfig() },
    });
    await withSim(dir, ["--scenario", scenario], async (sim) => {
      const run = startCliInProcess(
        ["run", "Read it twice.", "--output-format", "stream-json", "--mcp-config", config],
        {
          cwd: dir,
          env: sim.env,
        },
      );
      // While the model waits on the slow call, kill the filesystem server's process (by its pid).
      let pid: number | undefined;
      for (let attempt = 0; attempt < 400 && pid === undefined; attempt++) {
        const requests = await sim.requests();
        if (requests.filter((record) => record.querySource === "sdk").length >= 2) pid = serverPid(dir);
        else await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(pid).toBeGreaterThan(0);
      process.kill(pid!, "SIGKILL");
      const result = await run.exited;
      expect(result.code, result.stderr).toBe(0);
      expect(result.stderr).toContain('MCP server "files" stopped');
      expect(result.stderr).toContain('MCP server "files" restarted');
      const results = toolResults((await sim.requests()).filter((record) => record.path === "/v1/messages"));
      expect(resultText(results.get("toolu_before"))).toBe(filesystemReadText("still readable\n"));
      expect(resultText(results.get("toolu_after"))).toBe(filesystemReadText("still readable\n"));
      expect(serverPid(dir)).toBeUndefined(); // the restarted one was closed with the session
    });
  });

  it("R-M1: an Agent sub-agent in a worker thread calls MCP tools through the parent — server-filesystem's real result, the test server's image whole; in default mode its non-read-only MCP call is denied; `--disallowed-tools mcp__memory` takes every memory tool away (never offered, a call refused, nothing written); an untrusted project's .mcp.json is not started", async () => {
    const dir = await project("agent");
    await writeFile(join(dir, "notes.txt"), "read by a sub-agent\n");
    await writeMcpConfig(join(dir, ".mcp.json"), { proj: testServerConfig() });
    const config = {
      mcpServers: {
        files: filesystemServerConfig(dir),
        test: testServerConfig(),
        memory: memoryServerConfig(join(dir, "memory.jsonl")),
      },
    };
    const agent = "agent:general-purpose";
    const scenario = await writeScenario(
      join(dir, "scenario.json"),
      [
        step(
          "sdk",
          0,
          call("toolu_agent", "Agent", { description: "Use MCP", prompt: "Call the MCP tools" }),
        ),
        step("sdk", 1, { type: "text", text: "The sub-agent is done." }),
        step(
          agent,
          0,
          call("toolu_sub_read", "mcp__files__read_text_file", { path: join(dir, "notes.txt") }),
          call("toolu_sub_image", "mcp__test__image"),
          call("toolu_sub_note", "mcp__test__add_note", { note: "from a sub-agent" }),
          call("toolu_sub_memory", "mcp__memory__create_entities", {
            entities: [{ name: "denied", entityType: "x", observations: [] }],
          }),
        ),
        step(agent, 1, { type: "text", text: "Sub-agent report: read the notes." }),
      ],
      "(unscripted)",
    );
    await withSim(dir, ["--scenario", scenario], async (sim) => {
      const run = await runCliInProcess(
        [
          "run",
          "Have a sub-agent use MCP.",
          "--output-format",
          "stream-json",
          "--mcp-config",
          JSON.stringify(config),
          "--disallowed-tools",
          "mcp__memory",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/\.mcp\.json: ignored MCP servers \(proj\).*forkloop trust/);
      const lines = streamJsonLines(run.stdout);
      expect(lines.at(-1)).toMatchObject({ type: "result", result: "The sub-agent is done." });
      const init = lines.find((line) => line.type === "system" && line.subtype === "init");
      expect(init && "mcp_servers" in init ? init.mcp_servers.map((server) => server.name) : []).toEqual([
        "files",
        "test",
        "memory",
      ]);

      const records = (await sim.requests()).filter((record) => record.path === "/v1/messages");
      const subAgent = records.filter((record) => record.querySource === agent);
      expect(subAgent).toHaveLength(2);
      for (const record of records) {
        expect(bodyOf(record).tools.some((tool) => tool.name.startsWith("mcp__memory"))).toBe(false);
      }
      const results = toolResults(subAgent);
      expect(resultText(results.get("toolu_sub_read"))).toBe(filesystemReadText("read by a sub-agent\n"));
      const image = results.get("toolu_sub_image")?.content;
      const blocks = Array.isArray(image) ? image : [];
      expect(blocks.find((block) => block.type === "image")?.source?.data).toBe(TEST_PNG_BASE64);
      expect(results.get("toolu_sub_note")?.is_error).toBe(true);
      expect(resultText(results.get("toolu_sub_note"))).toMatch(/mcp__test__add_note/);
      expect(results.get("toolu_sub_memory")?.is_error).toBe(true);
      expect(existsSync(join(dir, "memory.jsonl"))).toBe(false);
    });
  });

  it("R-M1: forkloop batch starts the servers once for all its items — every item's call reaches the same server process; each item gets server-filesystem's real result", async () => {
    const dir = await project("batch");
    const ids = ["a", "b", "c"];
    await writeFile(join(dir, "items.jsonl"), ids.map((id) => JSON.stringify({ id })).join("\n"));
    for (const id of ids) await writeFile(join(dir, `notes-${id}.txt`), `notes of item ${id}\n`);
    await writeMcpConfig(join(dir, "servers.json"), {
      test: testServerConfig(),
      files: filesystemServerConfig(dir),
    });
    const scenario = await writeScenario(
      join(dir, "scenario.json"),
      [
        ...ids.map((id) => ({
          match: { querySource: "batch", turn: 0, lastUserText: `item ${id}` },
          reply: {
            content: [
              call(`toolu_pid_${id}`, "mcp__test__pid"),
              call(`toolu_read_${id}`, "mcp__files__read_text_file", { path: join(dir, `notes-${id}.txt`) }),
            ],
          },
        })),
        step("batch", 1, { type: "text", text: "Item done." }),
      ],
      "(unscripted)",
    );
    await withSim(dir, ["--scenario", scenario], async (sim) => {
      const run = await runCliInProcess(
        [
          "batch",
          "--items",
          "items.jsonl",
          "--prompt",
          "Handle item {{item.id}}",
          "--id",
          "mcp",
          "--concurrency",
          "3",
          "--mcp-config",
          "servers.json",
        ],
        { cwd: dir, env: sim.env },
      );
      expect(run.code, run.stderr).toBe(0);
      const results = (await readFile(join(batchStateDir(dir, "mcp"), "results.jsonl"), "utf8"))
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line) as { status: string });
      expect(results.map((result) => result.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
      const calls = toolResults((await sim.requests()).filter((record) => record.querySource === "batch"));
      const pids = ids.map((id) => resultText(calls.get(`toolu_pid_${id}`)));
      expect(pids[0]).toMatch(/^\d+$/);
      expect(new Set(pids).size).toBe(1);
      for (const id of ids)
        expect(resultText(calls.get(`toolu_read_${id}`))).toBe(filesystemReadText(`notes of item ${id}\n`));
    });
  });

  it("R-M1: --mcp-config takes several configs after one flag as Claude Code does (files and a JSON string), the prompt after them stays the prompt; keys of other clients are ignored with a line naming them", async () => {
    const dir = await project("several");
    await writeMcpConfig(join(dir, "a.json"), { a: testServerConfig() });
    await writeMcpConfig(join(dir, "b.json"), {
      b: { ...testServerConfig(), disabled: false, autoApprove: ["echo"] },
    });
    const inline = JSON.stringify({ mcpServers: { c: testServerConfig() } });
    await withSim(dir, [], async (sim) => {
      const run = await runCliInProcess(
        ["run", "--output-format", "stream-json", "--mcp-config", "a.json", "b.json", inline, "Say hi."],
        { cwd: dir, env: sim.env },
      );
      expect(run.code, run.stderr).toBe(0);
      const init = streamJsonLines(run.stdout).find(
        (line) => line.type === "system" && line.subtype === "init",
      );
      expect(init && "mcp_servers" in init ? init.mcp_servers : undefined).toEqual([
        { name: "a", status: "connected", source: "dynamic" },
        { name: "b", status: "connected", source: "dynamic" },
        { name: "c", status: "connected", source: "dynamic" },
      ]);
      expect(run.stderr).toContain(
        `${join(dir, "b.json")}: MCP server "b": ignored unknown keys "disabled", "autoApprove"`,
      );
      const [first] = (await sim.requests()).filter((record) => record.path === "/v1/messages");
      const prompt = JSON.stringify(bodyOf(first!).messages[0]?.content);
      expect(prompt).toContain("Say hi.");
      expect(prompt).not.toContain("b.json");
    });
  });

  it("R-M1: a bad MCP config or MCP rule is exit 2 naming the file, the server and the fix — before anything starts", async () => {
    const dir = await project("bad");
    await writeMcpConfig(join(dir, "bad.json"), { db: { command: envRef("DB_SERVER") } });
    const missing = await runCliInProcess(["run", "hi", "--mcp-config", "bad.json"], { cwd: dir });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(join(dir, "bad.json"));
    expect(missing.stderr).toContain('MCP server "db"');
    expect(missing.stderr).toContain(`${envRef("DB_SERVER")} is not set`);
    expect(missing.stderr).toContain("Fix:");
    const batch = await runCliInProcess(
      ["batch", "--files", "*.json", "--prompt", "x", "--id", "bad", "--mcp-config", "bad.json"],
      { cwd: dir },
    );
    expect(batch.code).toBe(2);
    expect(batch.stderr).toContain('MCP server "db"');
    expect(existsSync(batchStateDir(dir, "bad"))).toBe(false);
    const badRule = await runCliInProcess(["run", "hi", "--disallowed-tools", "mcp__db__"], { cwd: dir });
    expect(badRule.code).toBe(2);
    expect(badRule.stderr).toContain("write MCP rules as mcp__server");
  });
});
