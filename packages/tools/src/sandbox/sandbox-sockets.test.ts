import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
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
import type { SandboxPlan } from "./bubblewrap.js";

/**
 * R-S9: no host unix sockets inside the sandbox — socket files (outside /run and /tmp, inside the
 * workspace, behind a symlink into /run) and the abstract namespace, with the network shared or
 * not. The unix-socket filter refuses every unix socket inside; the cover and the namespace are
 * checked with it removed. Each case has a control: the same call with the protections removed
 * does connect.
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
const withControl = (sandboxArgs: (plan: SandboxPlan) => string[], network = false) =>
  createBashTool({ sandbox: { enabled: true, network }, sandboxArgs });
/** One protection removed and the unix-socket filter too, so the other layer is seen alone. */
const unfiltered =
  (weaken: (plan: SandboxPlan) => string[]) =>
  ({ seccompFd: _, ...plan }: SandboxPlan): string[] =>
    weaken(plan);

/** A host process that bound `name` from `dir` (a daemon that changed directory): its own process. */
function relativeListener(dir: string, name: string): Promise<ChildProcess> {
  const js = `require("net").createServer((s)=>s.end("hello from the host\\n")).listen(${JSON.stringify(name)},()=>console.log("up"))`;
  const child = spawn(process.execPath, ["-e", js], { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
  children.push(child);
  return new Promise((resolve) => child.stdout.once("data", () => resolve(child)));
}
const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill("SIGKILL");
});

describe("R-S9: no host unix sockets in the sandbox (real bwrap)", () => {
  it("R-S9: a host socket file outside /run and /tmp, and one inside the workspace, cannot be connected to — refused by the filter, and without it by the cover; without both they can (control)", async () => {
    for (const path of [join(outside.root, "daemon.sock"), join(ws.root, "app.sock")]) {
      await listen(path);
      const inside = resultText(await callTool(sandboxed, { command: connectCommand(path) }, ws.context()));
      expect(inside, path).toBe("refused EPERM");
      const coverOnly = withControl(weakenedSandbox.noUnixSocketFilter);
      const covered = resultText(await callTool(coverOnly, { command: connectCommand(path) }, ws.context()));
      expect(covered, path).toMatch(/^refused E/);
      expect(connections).toBe(0);
      const control = withControl(unfiltered(weakenedSandbox.noSocketCover));
      const reached = resultText(await callTool(control, { command: connectCommand(path) }, ws.context()));
      expect(reached, path).toBe("connected: hello from the host");
      connections = 0;
    }
  });

  it("R-S9: a host socket the kernel lists under no usable path — renamed after bind, or bound by a relative name — is refused by the unix-socket filter; without the filter both connect (control)", async () => {
    const bound = join(outside.root, "bound.sock");
    const moved = join(outside.root, "moved.sock");
    await listen(bound);
    renameSync(bound, moved);
    mkdirSync(join(outside.root, "daemon"));
    await relativeListener(join(outside.root, "daemon"), "daemon.sock");
    const relative = join(outside.root, "daemon", "daemon.sock");
    for (const path of [moved, relative]) {
      const inside = resultText(await callTool(sandboxed, { command: connectCommand(path) }, ws.context()));
      expect(inside, path).toBe("refused EPERM");
      const control = withControl(weakenedSandbox.noUnixSocketFilter);
      const reached = resultText(await callTool(control, { command: connectCommand(path) }, ws.context()));
      expect(reached, path).toBe("connected: hello from the host");
    }
  });

  it("R-S9: a workspace symlink to a host socket under /tmp (X11 and agent sockets live there) leads nowhere; with the host's /tmp and no filter it connects (control)", async () => {
    const socket = join(tmpdir(), `forkloop-test-${process.pid}.sock`);
    rmSync(socket, { force: true });
    await listen(socket);
    symlinkSync(socket, join(ws.root, "agent.sock"));
    const command = connectCommand(join(ws.root, "agent.sock"));
    expect(resultText(await callTool(sandboxed, { command }, ws.context()))).toBe("refused EPERM");
    const freshTmp = withControl(weakenedSandbox.noUnixSocketFilter);
    expect(resultText(await callTool(freshTmp, { command }, ws.context()))).toBe("refused ENOENT");
    const control = withControl(unfiltered(weakenedSandbox.hostTmp));
    expect(resultText(await callTool(control, { command }, ws.context()))).toBe(
      "connected: hello from the host",
    );
  });

  it("R-S9: the host's abstract unix sockets are unreachable — the filter, and a network namespace of its own under it; with the network shared and no filter it connects (control)", async () => {
    const name = `forkloop-test-abstract-${process.pid}`;
    await listen(`\0${name}`);
    const command = connectCommand(name, true);
    expect(resultText(await callTool(sandboxed, { command }, ws.context()))).toBe("refused EPERM");
    const networked = createBashTool({ sandbox: { enabled: true, network: true } });
    expect(resultText(await callTool(networked, { command }, ws.context()))).toBe("refused EPERM");
    // Without the filter, network off: the abstract namespace is the sandbox's own.
    const ownNamespace = withControl(weakenedSandbox.noUnixSocketFilter);
    expect(resultText(await callTool(ownNamespace, { command }, ws.context()))).toBe("refused ECONNREFUSED");
    expect(connections).toBe(0);
    const control = withControl(weakenedSandbox.sharedNetworkUnfiltered);
    expect(resultText(await callTool(control, { command }, ws.context()))).toBe(
      "connected: hello from the host",
    );
  });

  it("R-S9: programs still start children over pipes and socketpairs (the filter refuses unix sockets only), with the network shared or not", async () => {
    const script = `const{execFileSync,fork}=require("child_process");if(process.argv[2])process.send("ipc ok");else{process.stdout.write(execFileSync("echo",["child ok"]).toString().trim());const c=fork(__filename,["x"]);c.on("message",(m)=>{process.stdout.write(" "+m);c.kill()})}`;
    for (const network of [false, true]) {
      const tool = createBashTool({ sandbox: { enabled: true, network } });
      const file = join(ws.root, "children.js");
      writeFileSync(file, script.replace("__filename", JSON.stringify(file)));
      const result = await callTool(tool, { command: `'${process.execPath}' children.js` }, ws.context());
      expect(resultText(result), `network ${network}`).toBe("child ok ipc ok");
    }
  });
});
