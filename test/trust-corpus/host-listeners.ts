import { spawn } from "node:child_process";
import { existsSync, mkdirSync, renameSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { dirname, join } from "node:path";

/**
 * Listeners on the host (this process) that a sandboxed command must not reach: unix socket files,
 * an abstract-namespace socket, a TCP port on loopback. Each records whether anyone connected.
 */
export interface HostListener {
  readonly address: string;
  connected(): boolean;
  close(): Promise<void>;
}

function listen(server: Server, target: string | { port: number; host: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    if (typeof target === "string") server.listen(target, () => resolve());
    else server.listen(target.port, target.host, () => resolve());
  });
}

async function start(
  target: string | { port: number; host: string },
): Promise<HostListener & { server: Server }> {
  let connections = 0;
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    connections++;
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    socket.on("error", () => {});
    socket.end();
  });
  await listen(server, target);
  const address = server.address();
  return {
    server,
    address:
      typeof address === "string"
        ? address
        : typeof target === "string"
          ? target
          : `${target.host}:${(address as { port: number }).port}`,
    connected: () => connections > 0,
    // A peer that never closes its end (a killed sandbox's) must not keep the test waiting.
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}

/** A unix socket file at `path` (its directory made). */
export function socketFileListener(path: string): Promise<HostListener> {
  mkdirSync(dirname(path), { recursive: true });
  return start(path);
}

/**
 * A socket bound at `bound` and then renamed to `path`: the kernel's list of sockets
 * (/proc/net/unix) still names the path it was bound at.
 */
export async function renamedSocketListener(bound: string, path: string): Promise<HostListener> {
  const listener = await socketFileListener(bound);
  mkdirSync(dirname(path), { recursive: true });
  renameSync(bound, path);
  return { ...listener, address: path };
}

/**
 * A socket a host process bound by a relative name from its own directory `dir` (as a daemon that
 * changed directory does): the kernel lists it by that relative name. A child process of its own,
 * since changing this process's directory would move every other test; it records a connection
 * as a file.
 */
export function relativeSocketListener(dir: string, name: string): Promise<HostListener> {
  mkdirSync(dir, { recursive: true });
  const js =
    "const net=require('net'),fs=require('fs');" +
    "net.createServer((s)=>{fs.writeFileSync('connected','');s.on('error',()=>{});s.end()})" +
    `.listen(${JSON.stringify(name)},()=>console.log('listening'))`;
  const child = spawn(process.execPath, ["-e", js], { cwd: dir, stdio: ["ignore", "pipe", "ignore"] });
  return new Promise((resolve, reject) => {
    child.once("error", reject);
    child.stdout.once("data", () =>
      resolve({
        address: join(dir, name),
        connected: () => existsSync(join(dir, "connected")),
        close: () =>
          new Promise((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.once("close", () => done());
            child.kill("SIGKILL");
          }),
      }),
    );
  });
}

/** A socket in the abstract namespace (no file; `name` without the leading NUL). */
export function abstractListener(name: string): Promise<HostListener> {
  return start(`\0${name}`);
}

/** A TCP port on 127.0.0.1; `address` is `127.0.0.1:PORT`. */
export function loopbackListener(): Promise<HostListener> {
  return start({ port: 0, host: "127.0.0.1" });
}

/**
 * A node program that connects to each of `targets` and sends a byte: a unix socket path, `@name`
 * for the abstract namespace, `host:port`, or `$NAME` for the path a variable holds; before each
 * it leaves `.ran/<id>` (proof that it ran). Given to a shell as one word.
 */
export function connectProgram(targets: readonly (readonly [id: string, target: string])[]): string {
  const js =
    "const net=require('net'),fs=require('fs');fs.mkdirSync('.ran',{recursive:true});" +
    "for(const [id,n] of JSON.parse(process.argv[1])){fs.writeFileSync('.ran/'+id,'');const t=n.startsWith('$')?process.env[n.slice(1)]||'none':n;" +
    "const s=t.startsWith('@')?net.connect('\\0'+t.slice(1)):/^[\\d.]+:\\d+$/.test(t)?net.connect(+t.split(':')[1],t.split(':')[0]):net.connect(t);" +
    "s.on('connect',()=>s.end('x'));s.on('error',()=>{})}setTimeout(()=>process.exit(0),2000).unref()";
  return `${process.execPath} -e "${js}" '${JSON.stringify(targets)}'`;
}

/** The shell command that connects to one target (connectProgram's, without the ran marker's id). */
export function connectCommand(target: string): string {
  return connectProgram([["connect", target]]);
}
