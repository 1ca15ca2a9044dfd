import { rmSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  createOutsideDir,
  resultText,
  type TempWorkspace,
  useTempWorkspace,
  weakenedSandbox,
} from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";

/**
 * R-S9: no host unix sockets inside the sandbox — socket files (outside /run and /tmp, inside the
 * workspace, behind a symlink into /run) and the abstract namespace, with the network shared or
 * not. Each case has a control: the same call with that one protection removed does connect.
 */
const ws = useTempWorkspace();
let outside: TempWorkspace;
const servers: Server[] = [];
let connections = 0;

beforeEach(() => {
  outside = createOutsideDir("forkloop-sockets-");
  connections = 0;
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
  outside.cleanup();
});

async function listen(path: string): Promise<void> {
  const server = createServer((socket) => {
    connections++;
    socket.end("hello from the host\n");
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
}

/** A client run inside the sandbox: node (readable there like the rest of /), "connected" or the error code. */
function connectCommand(target: string, abstract = false): string {
  const script = `const net=require("net");const s=net.connect((${abstract}?"\\0":"")+process.argv[1]);s.on("data",d=>{process.stdout.write("connected: "+d);process.exit(0)});s.on("error",e=>{console.log("refused "+e.code);process.exit(0)})`;
  return `'${process.execPath}' -e '${script}' '${target}'`;
}

const sandboxed = createBashTool({ sandbox: { enabled: true } });
const withControl = (sandboxArgs: (typeof weakenedSandbox)[keyof typeof weakenedSandbox], network = false) =>
  createBashTool({ sandbox: { enabled: true, network }, sandboxArgs });

describe("R-S9: no host unix sockets in the sandbox (real bwrap)", () => {
  it("R-S9: a host socket file outside /run and /tmp, and one inside the workspace, cannot be connected to; without the cover they can (control)", async () => {
    for (const path of [join(outside.root, "daemon.sock"), join(ws.root, "app.sock")]) {
      await listen(path);
      const inside = resultText(await callTool(sandboxed, { command: connectCommand(path) }, ws.context()));
      expect(inside, path).toMatch(/^refused E/);
      expect(connections).toBe(0);
      const control = withControl(weakenedSandbox.noSocketCover);
      const reached = resultText(await callTool(control, { command: connectCommand(path) }, ws.context()));
      expect(reached, path).toBe("connected: hello from the host");
      connections = 0;
    }
  });

  it("R-S9: a workspace symlink to a host socket under /tmp (X11 and agent sockets live there) leads nowhere; with the host's /tmp it connects (control)", async () => {
    const socket = join(tmpdir(), `forkloop-test-${process.pid}.sock`);
    rmSync(socket, { force: true });
    await listen(socket);
    symlinkSync(socket, join(ws.root, "agent.sock"));
    const command = connectCommand(join(ws.root, "agent.sock"));
    expect(resultText(await callTool(sandboxed, { command }, ws.context()))).toBe("refused ENOENT");
    const control = withControl(weakenedSandbox.hostTmp);
    expect(resultText(await callTool(control, { command }, ws.context()))).toBe(
      "connected: hello from the host",
    );
  });

  it("R-S9: the host's abstract unix sockets are unreachable — a network namespace of its own, and with the network shared, the unix-socket filter; each control connects", async () => {
    const name = `forkloop-test-abstract-${process.pid}`;
    await listen(`\0${name}`);
    const command = connectCommand(name, true);
    // Network off (the default): the abstract namespace is the sandbox's own.
    expect(resultText(await callTool(sandboxed, { command }, ws.context()))).toBe("refused ECONNREFUSED");
    // Network shared: no unix socket can be made at all.
    const networked = createBashTool({ sandbox: { enabled: true, network: true } });
    expect(resultText(await callTool(networked, { command }, ws.context()))).toBe("refused EPERM");
    expect(connections).toBe(0);
    // Control: the network shared without the filter reaches the host's socket.
    const control = withControl(weakenedSandbox.sharedNetworkUnfiltered);
    expect(resultText(await callTool(control, { command }, ws.context()))).toBe(
      "connected: hello from the host",
    );
  });

  it("R-S9: with the network shared, programs still start children over pipes (the filter refuses unix sockets only)", async () => {
    const networked = createBashTool({ sandbox: { enabled: true, network: true } });
    const script = `const{execFileSync}=require("child_process");process.stdout.write(execFileSync("echo",["child ok"]).toString())`;
    const result = await callTool(
      networked,
      { command: `'${process.execPath}' -e '${script}'` },
      ws.context(),
    );
    expect(resultText(result)).toBe("child ok");
  });
});
