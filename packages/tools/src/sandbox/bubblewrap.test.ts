import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  createOutsideDir,
  resultText,
  type TempWorkspace,
  useTempWorkspace,
  weakenedSandbox,
} from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";
import { findBubblewrap, probeBubblewrap } from "./bubblewrap.js";

const ws = useTempWorkspace();
let outside: TempWorkspace;
let server: Server;
let port = 0;
const connections: number[] = [];

beforeAll(async () => {
  server = createServer((socket) => {
    connections.push(Date.now());
    socket.end("hello from the host\n");
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  port = typeof address === "object" && address !== null ? address.port : 0;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  // Where bwrap does not hide it (not under /tmp), so "cannot write outside" can fail.
  outside = createOutsideDir("forkloop-sandbox-outside-");
});
afterEach(() => outside.cleanup());

// .ci/run installs bubblewrap, so these run for real on CI too.
const sandboxed = createBashTool({ sandbox: { enabled: true } });

describe("R-S6: Bash in bubblewrap (real bwrap)", () => {
  it("R-S6: bwrap is installed and works here", () => {
    expect(probeBubblewrap()).toEqual({ ok: true, bwrap: findBubblewrap() });
  });

  it("R-S6 / R-S9: writes inside the workspace work; writes outside it fail — and do not fail when / is bound writable (control)", async () => {
    const target = join(outside.root, "escaped.txt");
    const command = `echo inside > in.txt && cat in.txt; echo outside > '${target}'; echo x > /etc/forkloop-sandbox-escape`;
    const result = await callTool(sandboxed, { command }, ws.context());
    expect(readFileSync(join(ws.root, "in.txt"), "utf8")).toBe("inside\n");
    expect(resultText(result)).toMatch(/^inside\n.*Read-only file system.*Read-only file system/s);
    expect(existsSync(target)).toBe(false);
    expect(existsSync("/etc/forkloop-sandbox-escape")).toBe(false);
    // Control: the same command with `/` bound writable does write outside, so the assertion above
    // is about the sandbox, not about a directory bubblewrap hides.
    const weakened = createBashTool({
      sandbox: { enabled: true },
      sandboxArgs: weakenedSandbox.rootWritable,
    });
    await callTool(weakened, { command: `echo outside > '${target}'` }, ws.context());
    expect(readFileSync(target, "utf8")).toBe("outside\n");
  });

  it("R-S9: the host's /tmp and /run are not visible inside (fresh ones); with the host's /tmp or /run they are (controls)", async () => {
    const marker = join(tmpdir(), `forkloop-host-tmp-${process.pid}`);
    writeFileSync(marker, "host");
    try {
      const command = `ls '${marker}' 2>&1; ls /run | wc -l`;
      const inside = resultText(await callTool(sandboxed, { command }, ws.context()));
      expect(inside).toMatch(/No such file or directory/);
      expect(inside).toMatch(/^0$/m);
      const withHostRun = createBashTool({
        sandbox: { enabled: true },
        sandboxArgs: weakenedSandbox.hostRun,
      });
      const shown = resultText(await callTool(withHostRun, { command: "ls /run | wc -l" }, ws.context()));
      expect(Number(shown.trim())).toBeGreaterThan(0);
      const withHostTmp = createBashTool({
        sandbox: { enabled: true },
        sandboxArgs: weakenedSandbox.hostTmp,
      });
      const seen = resultText(await callTool(withHostTmp, { command: `cat '${marker}'` }, ws.context()));
      expect(seen).toBe("host");
    } finally {
      rmSync(marker, { force: true });
    }
  });

  it("R-S6: cannot open a TCP connection to a port listening on the host's 127.0.0.1", async () => {
    const command = `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3`;
    const before = connections.length;
    const result = await callTool(sandboxed, { command }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).not.toContain("hello from the host");
    expect(connections.length).toBe(before);
    // The same command unsandboxed does connect: the test can fail.
    const direct = await callTool(createBashTool(), { command }, ws.context());
    expect(resultText(direct)).toContain("hello from the host");
  });

  it("R-S4 / R-S6: a sandboxed Bash cannot read forkloop's own starting environment at /proc/PID/environ; unsandboxed it can", async () => {
    // The kernel keeps a process's starting environment (with the API key, if it was there)
    // readable to its user; only the sandbox's PID namespace hides the process (README, Environment).
    const command = `tr '\\0' '\\n' < /proc/${process.pid}/environ | grep -c '^PATH='`;
    const direct = await callTool(createBashTool(), { command }, ws.context());
    expect(resultText(direct).trim()).toBe("1");
    const inside = await callTool(sandboxed, { command }, ws.context());
    expect(resultText(inside)).toMatch(/^0$/m);
  });

  it("R-S6: the rest of the file system is readable, the home directory read-only — writable with / bound writable (control)", async () => {
    const marker = join(homedir(), `.forkloop-sandbox-control-${process.pid}`);
    const command = `cat /etc/hostname >/dev/null && echo ok; touch '${marker}' 2>&1 | head -1`;
    try {
      const result = await callTool(sandboxed, { command }, ws.context());
      expect(resultText(result)).toMatch(/^ok\n.*(Read-only file system|Permission denied)/s);
      expect(existsSync(marker)).toBe(false);
      const weakened = createBashTool({
        sandbox: { enabled: true },
        sandboxArgs: weakenedSandbox.rootWritable,
      });
      await callTool(weakened, { command }, ws.context());
      expect(existsSync(marker)).toBe(true);
    } finally {
      rmSync(marker, { force: true });
    }
  });

  it("R-S6, R-X1: dangerouslyDisableSandbox (Claude Code's input) is refused while the sandbox is on — the command does not run at all; without it, it runs sandboxed (control); with the sandbox off, it changes nothing", async () => {
    const target = join(outside.root, "unsandboxed.txt");
    const command = `echo ran > ran.txt; echo outside > '${target}'`;
    const refused = await callTool(sandboxed, { command, dangerouslyDisableSandbox: true }, ws.context());
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toMatch(/dangerouslyDisableSandbox is refused: the sandbox is on .*not run/);
    expect(existsSync(join(ws.root, "ran.txt"))).toBe(false);
    expect(existsSync(target)).toBe(false);
    // Control: the same call without it runs, inside the sandbox (the outside write fails).
    await callTool(sandboxed, { command }, ws.context());
    expect(existsSync(join(ws.root, "ran.txt"))).toBe(true);
    expect(existsSync(target)).toBe(false);
    rmSync(join(ws.root, "ran.txt"));
    const unsandboxed = await callTool(
      createBashTool(),
      { command, dangerouslyDisableSandbox: true },
      ws.context(),
    );
    expect(unsandboxed.isError).toBe(false);
    expect(existsSync(join(ws.root, "ran.txt"))).toBe(true);
  });

  it("R-S6: on, with bwrap unavailable, is a reported error and the command does not run; off, it runs (control)", async () => {
    const tool = createBashTool({
      sandbox: { enabled: true },
      baseEnv: { PATH: "/nonexistent" },
    });
    const saved = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      expect(probeBubblewrap("/nonexistent")).toEqual({
        ok: false,
        reason: expect.stringMatching(/bwrap is not on PATH/),
      });
      const result = await callTool(tool, { command: "echo ran > ran.txt" }, ws.context());
      expect(result.isError).toBe(true);
      expect(resultText(result)).toMatch(
        /sandbox is on .* bubblewrap \(bwrap\) is not on PATH, so the command was not run/,
      );
    } finally {
      process.env.PATH = saved;
    }
    expect(existsSync(join(ws.root, "ran.txt"))).toBe(false);
    // Control: with the sandbox off the same command does run.
    await callTool(createBashTool(), { command: "echo ran > ran.txt" }, ws.context());
    expect(existsSync(join(ws.root, "ran.txt"))).toBe(true);
  });
});
