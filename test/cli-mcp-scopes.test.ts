import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, streamJsonLines, withSim, writeScenario } from "@forkloop/cli/testing";
import { testServerConfig } from "@forkloop/mcp/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toolCall as call, resultText, toolResults } from "./support/sim-tool-results.js";

// R-M1 through the CLI: every place Claude Code reads MCP servers from, in a
// home and a project of the test's own, and the precedence between them (local > project > user).

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-cli-mcp-scopes-"));
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** The test server, saying which scope started it (its `env` tool reads SCOPE). */
const server = (scope: string) => ({ ...testServerConfig(), env: { SCOPE: scope } });

async function writeJson(path: string, value: unknown): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, JSON.stringify(value));
}

function mcpServersOf(stdout: string): unknown {
  const init = streamJsonLines(stdout).find((line) => line.type === "system" && line.subtype === "init");
  return init && "mcp_servers" in init ? init.mcp_servers : undefined;
}

async function writeScopes(home: string, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeJson(join(home, ".claude.json"), {
    mcpServers: { "user-json": server("user-json"), shared: server("user") },
    projects: { [dir]: { mcpServers: { "local-json": server("local-json"), shared: server("local") } } },
  });
  await writeJson(join(home, ".claude", "settings.json"), {
    mcpServers: { "user-settings": server("user") },
  });
  await writeJson(join(dir, ".mcp.json"), {
    mcpServers: { project: server("project"), shared: server("project") },
  });
  await writeJson(join(dir, ".claude", "settings.local.json"), {
    mcpServers: { "local-settings": server("local-settings") },
  });
}

describe("R-M1: MCP servers from Claude Code's scopes (CLI)", () => {
  it("R-M1: ~/.claude.json (user, and local under projects[cwd]), settings' mcpServers (user, local) and the project's .mcp.json all start; a name in several scopes is the local one (local > project > user)", async () => {
    const home = join(root, "home-all");
    const dir = join(root, "project-all");
    await writeScopes(home, dir);
    const scenario = await writeScenario(
      join(root, "scenario.json"),
      [
        {
          match: { querySource: "sdk", turn: 0 },
          reply: { content: [call("toolu_scope", "mcp__shared__env", { name: "SCOPE" })] },
        },
      ],
      "Done.",
    );
    await withSim(dir, ["--scenario", scenario], async (sim) => {
      const run = await runCliInProcess(
        ["run", "Which scope?", "--output-format", "stream-json", "--trust-project"],
        {
          cwd: dir,
          env: { ...sim.env, HOME: home },
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const names = (mcpServersOf(run.stdout) as { name: string; status: string }[]).map(
        ({ name, status }) => `${name}:${status}`,
      );
      expect(names.sort()).toEqual(
        ["user-json", "shared", "user-settings", "project", "local-settings", "local-json"]
          .map((name) => `${name}:connected`)
          .sort(),
      );
      const results = toolResults((await sim.requests()).filter((record) => record.path === "/v1/messages"));
      expect(resultText(results.get("toolu_scope"))).toBe("local");
    });
  });

  it("R-M1: --strict-mcp-config keeps only the --mcp-config servers, whatever the scopes hold; a relative --mcp-config file is where the command was typed, not under --cwd", async () => {
    const home = join(root, "home-strict");
    const dir = join(root, "project-strict");
    await writeScopes(home, dir);
    await writeJson(join(root, "only.json"), { mcpServers: { only: testServerConfig() } });
    const run = await runCliInProcess(
      [
        "run",
        "hi",
        "--output-format",
        "stream-json",
        "--cwd",
        dir,
        "--trust-project",
        "--strict-mcp-config",
        "--mcp-config",
        "only.json",
      ],
      { cwd: root, env: { HOME: home } },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(mcpServersOf(run.stdout)).toEqual([{ name: "only", status: "connected", source: "dynamic" }]);
  });
});
