import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { mergeMcpServers, parseMcpServers, readMcpConfigFile } from "./mcp-config.js";

const env = { DSN: "postgres://x", API_KEY: "k3y" };
const project = { scope: "project" as const, file: "/repo/.mcp.json" };

function errorOf(value: unknown): string {
  const result = parseMcpServers(value, project, env);
  if (result.ok) throw new Error("expected an error");
  return result.error;
}

describe("R-M1: MCP server config as Claude Code writes it", () => {
  it("R-M1: the reference's .mcp.json parses, with ${VAR} expanded in command, args, env, url and headers", () => {
    const result = parseMcpServers(
      {
        db: {
          type: "stdio",
          command: "${BIN:-npx}",
          args: ["-y", "some-server", "--dsn=${DSN}"],
          env: { DSN: "${DSN}" },
        },
        api: {
          type: "http",
          url: "${API_BASE_URL:-https://api.example.com}/mcp",
          headers: { Authorization: "Bearer ${API_KEY}" },
          timeout: 5000,
        },
        old: { type: "sse", url: "https://example.com/sse" },
        plain: { command: "server" },
      },
      project,
      env,
    );
    expect(result).toEqual({
      ok: true,
      servers: [
        {
          name: "db",
          source: project,
          config: {
            type: "stdio",
            command: "npx",
            args: ["-y", "some-server", "--dsn=postgres://x"],
            env: { DSN: "postgres://x" },
          },
        },
        {
          name: "api",
          source: project,
          config: {
            type: "http",
            url: "https://api.example.com/mcp",
            headers: { Authorization: "Bearer k3y" },
            timeout: 5000,
          },
        },
        { name: "old", source: project, config: { type: "sse", url: "https://example.com/sse" } },
        { name: "plain", source: project, config: { command: "server" } },
      ],
    });
  });

  it.each([
    [
      { db: { command: "x", env: { T: "${NOPE}" } } },
      'MCP server "db": ${NOPE} is not set. Fix: set NOPE in the environment',
    ],
    [
      { db: { type: "websocket", url: "ws://x" } },
      'MCP server "db": unknown type "websocket". Fix: use "stdio" (the default), "http" or "sse"',
    ],
    [{ db: { url: "https://x/mcp" } }, 'MCP server "db": a url without a type. Fix: add "type": "http"'],
    [{ db: { command: "" } }, 'MCP server "db": Too small'],
    [{ db: { command: "x", arg: ["typo"] } }, 'MCP server "db": Unrecognized key: "arg"'],
    [
      { db: { type: "http", url: "not a url" } },
      'MCP server "db": url "not a url" is not a URL. Fix: an http server is',
    ],
    [{ db: { type: "http", url: "file:///etc/passwd" } }, "is not http(s)"],
    [{ db: { command: "x", timeout: -1 } }, "at timeout"],
    [{ db: "npx server" }, 'MCP server "db": the config is not an object. Fix: a stdio server is'],
    [
      { my__db: { command: "x" } },
      'MCP server "my__db": the name becomes "my__db" in tool names, and "__" separates the server from the tool. Fix: rename it, e.g. "my-db"',
    ],
    [
      { "a.b": { command: "x" }, a_b: { command: "y" } },
      'MCP server "a_b": its tools would be named like those of server "a.b"',
    ],
    [["db"], '"mcpServers" must be an object'],
  ])("R-M1: bad config %j names the file, the server and the fix", (value, expected) => {
    const error = errorOf(value);
    expect(error.startsWith("/repo/.mcp.json")).toBe(true);
    expect(error).toContain(expected);
    expect(error).toContain("Fix:");
  });

  it("R-M1: keys of other clients (disabled, description, autoApprove, headersHelper) are dropped as Claude Code drops them, and listed", () => {
    const servers = {
      db: { command: "db-server", disabled: false, description: "the db", autoApprove: ["query"] },
      api: { type: "http", url: "https://x/mcp", headersHelper: "get-token.sh" },
      plain: { type: "sse", url: "https://x/sse" },
    };
    expect(parseMcpServers(servers, project, env)).toEqual({
      ok: true,
      servers: [
        {
          name: "db",
          source: project,
          config: { command: "db-server" },
          ignoredKeys: ["disabled", "description", "autoApprove"],
        },
        {
          name: "api",
          source: project,
          config: { type: "http", url: "https://x/mcp" },
          ignoredKeys: ["headersHelper"],
        },
        { name: "plain", source: project, config: { type: "sse", url: "https://x/sse" } },
      ],
    });
  });

  it.each([
    [{ db: { comand: "x" } }, 'Unrecognized key: "comand" (did you mean "command"?)'],
    [{ db: { command: "x", envs: { A: "1" } } }, 'Unrecognized key: "envs" (did you mean "env"?)'],
    [{ db: { type: "http", url: "https://x/mcp", header: {} } }, '(did you mean "headers"?)'],
  ])("R-M1: a near miss of a known key %j is a typo, refused with the key it meant", (value, expected) => {
    expect(errorOf(value)).toContain(expected);
  });

  it("R-M1: scopes merge by name, the later list winning (local > project > user)", () => {
    const user = parseMcpServers(
      { a: { command: "user-a" }, b: { command: "user-b" } },
      { scope: "user" },
      env,
    );
    const local = parseMcpServers({ a: { command: "local-a" } }, { scope: "local" }, env);
    if (!user.ok || !local.ok) throw new Error("parse failed");
    const merged = mergeMcpServers(user.servers, local.servers);
    expect(
      merged.ok &&
        merged.servers.map((s) => [s.name, "command" in s.config && s.config.command, s.source.scope]),
    ).toEqual([
      ["a", "local-a", "local"],
      ["b", "user-b", "user"],
    ]);
  });

  it("R-M1: a config file: missing (allowed for .mcp.json), not JSON, no mcpServers — each named with its fix", async () => {
    const dir = await mkdtemp(join(tmpdir(), "forkloop-mcp-config-"));
    const file = join(dir, ".mcp.json");
    expect(await readMcpConfigFile(file, "project", env, { missingOk: true })).toEqual({
      ok: true,
      servers: [],
    });
    expect(await readMcpConfigFile(file, "flag", env)).toEqual({
      ok: false,
      error: `${file}: cannot read the MCP config (ENOENT). Fix: check the path.`,
    });
    await writeFile(file, "{ mcpServers: {} }");
    expect(await readMcpConfigFile(file, "project", env)).toMatchObject({
      ok: false,
      error: expect.stringContaining(`${file}: not valid JSON`),
    });
    await writeFile(file, JSON.stringify({ servers: {} }));
    expect(await readMcpConfigFile(file, "project", env)).toMatchObject({
      ok: false,
      error: expect.stringContaining('no "mcpServers" key'),
    });
    await writeFile(file, JSON.stringify({ mcpServers: { fs: { command: "node", args: ["server.js"] } } }));
    expect(await readMcpConfigFile(file, "project", env)).toEqual({
      ok: true,
      servers: [
        { name: "fs", source: { scope: "project", file }, config: { command: "node", args: ["server.js"] } },
      ],
    });
  });
});
