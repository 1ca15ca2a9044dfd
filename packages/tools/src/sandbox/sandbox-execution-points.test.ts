import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace, weakenedSandbox } from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";

/**
 * R-S9: inside bubblewrap, what runs later outside it — the project's and the user's settings —
 * is read-only while the rest of the workspace stays writable. Each case has a control: the same
 * call with the read-only points removed (or the sandbox off) does change them.
 */
const ws = useTempWorkspace();
const home = () => join(ws.root, "home");
const sandboxed = () => createBashTool({ sandbox: { enabled: true }, home: home() });
const unguarded = () =>
  createBashTool({
    sandbox: { enabled: true },
    home: home(),
    sandboxArgs: weakenedSandbox.noExecutionPoints,
  });

function put(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const run = async (tool: ReturnType<typeof createBashTool>, command: string) =>
  resultText(await callTool(tool, { command }, ws.context()));

describe("R-S9: the sandbox keeps settings read-only (real bwrap)", () => {
  it("R-S9: the project's .forkloop/, .claude/ and .mcp.json cannot be changed or added to; other files can; without the read-only points they can (control)", async () => {
    put(join(ws.root, ".forkloop/settings.json"), "{}");
    put(join(ws.root, ".claude/settings.json"), "{}");
    put(join(ws.root, ".mcp.json"), '{"mcpServers":{}}');
    const attack = [
      `echo '{"hooks":{}}' > .forkloop/settings.json`,
      "echo x > .forkloop/settings.local.json",
      "echo x > .claude/settings.json",
      "mkdir .claude/agents",
      "echo x > .mcp.json",
      "mv .claude .claude-old",
      "echo ok > src.txt",
    ].join("; ");
    const output = await run(sandboxed(), attack);
    expect(output.match(/Read-only file system|Device or resource busy/g)?.length, output).toBe(6);
    expect(readFileSync(join(ws.root, ".forkloop/settings.json"), "utf8")).toBe("{}");
    expect(existsSync(join(ws.root, ".forkloop/settings.local.json"))).toBe(false);
    expect(readFileSync(join(ws.root, ".claude/settings.json"), "utf8")).toBe("{}");
    expect(readFileSync(join(ws.root, ".mcp.json"), "utf8")).toBe('{"mcpServers":{}}');
    expect(readFileSync(join(ws.root, "src.txt"), "utf8")).toBe("ok\n");
    // Control: the same command without the read-only points changes every one of them.
    await run(unguarded(), attack);
    expect(readFileSync(join(ws.root, ".forkloop/settings.json"), "utf8")).toBe('{"hooks":{}}\n');
    expect(readFileSync(join(ws.root, ".mcp.json"), "utf8")).toBe("x\n");
    expect(existsSync(join(ws.root, ".claude-old/settings.json"))).toBe(true);
  });

  it("R-S9: missing settings directories cannot be created (they are made empty first); without the read-only points they can (control)", async () => {
    const attack =
      "mkdir -p .claude .forkloop; echo '{}' > .claude/settings.json; echo '{}' > .forkloop/settings.json";
    const output = await run(sandboxed(), attack);
    expect(output).toMatch(/Read-only file system/);
    expect(readdirSync(join(ws.root, ".claude"))).toEqual([]);
    expect(readdirSync(join(ws.root, ".forkloop"))).toEqual([]);
    await run(unguarded(), attack);
    expect(readdirSync(join(ws.root, ".claude"))).toEqual(["settings.json"]);
  });

  it("R-S9: a missing .mcp.json the command creates is moved aside once the sandbox is gone, and the result says so; with the sandbox off it stays (control)", async () => {
    const output = await run(sandboxed(), `echo '{"mcpServers":{"x":{"command":"touch"}}}' > .mcp.json`);
    expect(output).toMatch(
      /does not let commands create or replace .*\.mcp\.json .*moved to .*\.mcp\.json\.forkloop-blocked-/,
    );
    expect(existsSync(join(ws.root, ".mcp.json"))).toBe(false);
    const aside = readdirSync(ws.root).filter((name) => name.startsWith(".mcp.json.forkloop-blocked-"));
    expect(aside).toHaveLength(1);
    expect(readFileSync(join(ws.root, aside[0] as string), "utf8")).toContain('"touch"');
    await run(createBashTool({ home: home() }), "echo '{}' > .mcp.json");
    expect(readFileSync(join(ws.root, ".mcp.json"), "utf8")).toBe("{}\n");
  });

  it("R-S9: a settings name that is a symlink inside the workspace: its target is read-only, and a replaced link is moved aside and put back; with the sandbox off neither (control)", async () => {
    put(join(ws.root, "config/claude/settings.json"), "{}");
    symlinkSync("config/claude", join(ws.root, ".claude"));
    const attack =
      "echo x > config/claude/settings.json; rm .claude && mkdir .claude && echo '{}' > .claude/settings.local.json";
    const output = await run(sandboxed(), attack);
    expect(output).toMatch(/Read-only file system/);
    expect(output).toMatch(/moved to .*\.claude\.forkloop-blocked-/);
    expect(readFileSync(join(ws.root, "config/claude/settings.json"), "utf8")).toBe("{}");
    expect(readlinkSync(join(ws.root, ".claude"))).toBe("config/claude");
    await run(createBashTool({ home: home() }), attack);
    expect(readFileSync(join(ws.root, "config/claude/settings.json"), "utf8")).toBe("x\n");
    expect(readFileSync(join(ws.root, ".claude/settings.local.json"), "utf8")).toBe("{}\n");
  });

  it("R-S9: when home is inside the workspace, the user's ~/.forkloop, ~/.claude and ~/.claude.json are read-only too; without the points they are not (control)", async () => {
    put(join(home(), ".forkloop/trusted-projects.json"), "[]");
    put(join(home(), ".claude.json"), "{}");
    const attack = `echo '["/"]' > home/.forkloop/trusted-projects.json; echo x > home/.claude.json; mkdir -p home/.claude && echo x > home/.claude/settings.json`;
    const output = await run(sandboxed(), attack);
    expect(output.match(/Read-only file system/g)?.length, output).toBe(3);
    expect(readFileSync(join(home(), ".forkloop/trusted-projects.json"), "utf8")).toBe("[]");
    expect(readdirSync(join(home(), ".claude"))).toEqual([]);
    await run(unguarded(), attack);
    expect(readFileSync(join(home(), ".forkloop/trusted-projects.json"), "utf8")).toBe('["/"]\n');
  });

  it("R-S9: when home is inside the workspace, its shell startup files and ~/.ssh are read-only and a new one is moved aside; without the points they are not (control)", async () => {
    put(join(home(), ".bashrc"), "# rc\n");
    put(join(home(), ".ssh/known_hosts"), "");
    const attack =
      "echo evil >> home/.bashrc; echo evil > home/.profile; echo 'Host *' > home/.ssh/config; mv home/.ssh home/.ssh-old";
    const output = await run(sandboxed(), attack);
    expect(output.match(/Read-only file system|Device or resource busy/g)?.length, output).toBe(3);
    expect(output).toMatch(/moved to .*\.profile\.forkloop-blocked-/);
    expect(readFileSync(join(home(), ".bashrc"), "utf8")).toBe("# rc\n");
    expect(existsSync(join(home(), ".profile"))).toBe(false);
    expect(readdirSync(join(home(), ".ssh"))).toEqual(["known_hosts"]);
    await run(unguarded(), "echo evil >> home/.bashrc; echo 'Host *' > home/.ssh/config");
    expect(readFileSync(join(home(), ".bashrc"), "utf8")).toBe("# rc\nevil\n");
    expect(readFileSync(join(home(), ".ssh/config"), "utf8")).toBe("Host *\n");
  });

  it("R-S9: the session's home named by the sandbox policy (a query()'s env.HOME) is the one kept read-only; without it this process's home is, and the session's is not (control)", async () => {
    put(join(home(), ".claude.json"), "{}");
    const attack = "echo x > home/.claude.json";
    const output = await run(createBashTool({ sandbox: { enabled: true, home: home() } }), attack);
    expect(output).toMatch(/Read-only file system/);
    expect(readFileSync(join(home(), ".claude.json"), "utf8")).toBe("{}");
    await run(createBashTool({ sandbox: { enabled: true } }), attack);
    expect(readFileSync(join(home(), ".claude.json"), "utf8")).toBe("x\n");
  });
});
