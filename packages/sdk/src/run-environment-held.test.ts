import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { recordHeldPoints } from "@forkloop/tools/testing";
import { afterEach, describe, expect, it } from "vitest";
import { resolveRunEnvironment } from "./run-environment.js";

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A trusted project that is also HOME, with a server in each MCP file and a hook in its settings. */
function plant(): string {
  dir = mkdtempSync(join(tmpdir(), "forkloop-held-"));
  const server = { command: "true" };
  writeFileSync(join(dir, ".mcp.json"), JSON.stringify({ mcpServers: { project: server } }));
  writeFileSync(join(dir, ".claude.json"), JSON.stringify({ mcpServers: { user: server } }));
  mkdirSync(join(dir, ".claude"));
  const hook = { hooks: [{ type: "command", command: "true" }] };
  writeFileSync(join(dir, ".claude", "settings.json"), JSON.stringify({ hooks: { Stop: [hook] } }));
  return dir;
}

async function start(cwd: string) {
  const lines: string[] = [];
  const run = await resolveRunEnvironment({
    cwd,
    env: { HOME: cwd },
    settingSources: ["user", "project", "local"],
    trustProject: true,
    warn: (line) => lines.push(line),
  });
  const servers = await run.mcpServers({ configFiles: undefined, servers: undefined, strict: undefined });
  return { lines, names: servers.entries.map((entry) => entry.name), hooks: run.settings.hooks };
}

describe("R-S9: session start skips what a running sandboxed command may still create", () => {
  it("R-S9: a held .mcp.json, ~/.claude.json and settings file are skipped, each named once with the reason; released, all are used", async () => {
    const cwd = plant();
    const release = recordHeldPoints(join(cwd, ".forkloop"), [
      { path: join(cwd, ".mcp.json"), what: "the project's MCP servers" },
      { path: join(cwd, ".claude.json"), what: "the user's MCP servers" },
      { path: join(cwd, ".claude"), what: "Claude Code's project settings" },
    ]);
    const held = await start(cwd);
    release();
    expect(held.names).toEqual([]);
    expect(held.hooks.Stop ?? []).toEqual([]);
    for (const file of [".mcp.json", ".claude.json", join(".claude", "settings.json")]) {
      const naming = held.lines.filter((line) => line.includes(`${join(cwd, file)}:`));
      expect(naming, held.lines.join("\n")).toHaveLength(1);
      expect(naming[0]).toContain(`a sandboxed command still running (forkloop process ${process.pid})`);
    }
    // Control: with the command ended, the same files are read.
    const after = await start(cwd);
    expect(after.names.sort()).toEqual(["project", "user"]);
    expect(after.hooks.Stop).toHaveLength(1);
  });
});
