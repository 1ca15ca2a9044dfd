import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@forkloop/loop-core/testing";

/**
 * A real `redis-server` for a test or a benchmark (R-B1: no mock Redis): a free port, a temp
 * dir, AOF on with `appendfsync always` and `maxmemory-policy noeviction` (the settings the
 * BullMQ backend's README asks for), stopped and deleted by `stop()`. `.ci/run` installs Debian's
 * redis-server when it is missing.
 */
export interface RedisServer {
  readonly url: string;
  readonly port: number;
  /** Its data directory (dump.rdb, the append-only file). */
  readonly dir: string;
  /** Stops it (SIGTERM, AOF flushed) and starts it again on the same port and data. */
  restart(options?: { downMs?: number }): Promise<void>;
  stop(): Promise<void>;
}

const REDIS_SERVER = process.env.REDIS_SERVER ?? "redis-server";

/**
 * R-R10 chaos cases: `persistence: "none"` (no AOF, no save points: a restart comes back empty,
 * or from a snapshot taken by hand with SAVE — a rollback), `args` (given last, so they win:
 * `--maxmemory-policy allkeys-lru`, `--requirepass`, `--replicaof`).
 */
export interface RedisServerOptions {
  readonly persistence?: "aof" | "none";
  readonly args?: readonly string[];
  /** A command prefix it runs under and the address it listens on (network-hosts.ts); 127.0.0.1 by default. */
  readonly launcher?: readonly string[];
  readonly bind?: string;
}

function launch(port: number, dir: string, options: RedisServerOptions): Promise<ChildProcess> {
  const persistence =
    options.persistence === "none"
      ? ["--appendonly", "no"]
      : ["--appendonly", "yes", "--appendfsync", "always"];
  const [command, ...prefix] = [...(options.launcher ?? []), REDIS_SERVER];
  const child = spawn(
    command as string,
    [
      ...prefix,
      "--port",
      String(port),
      "--bind",
      options.bind ?? "127.0.0.1",
      "--dir",
      dir,
      "--save",
      "",
      ...persistence,
      "--maxmemory-policy",
      "noeviction",
      // Protected mode answers every client from another address DENIED unless a password is set.
      ...(options.bind === undefined ? [] : ["--protected-mode", "no"]),
      ...(options.args ?? []),
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  return new Promise((resolve, reject) => {
    let output = "";
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes("Ready to accept connections")) {
        child.stdout?.off("data", onData);
        child.stdout?.resume();
        resolve(child);
      }
    };
    child.stdout?.on("data", onData);
    child.on("error", (error) =>
      reject(
        new Error(
          `cannot start ${REDIS_SERVER} (${error.message}); install it: apt-get install redis-server`,
        ),
      ),
    );
    child.on("exit", (code) =>
      reject(new Error(`redis-server exited with ${code} before it was ready:\n${output}`)),
    );
  });
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once("exit", () => resolve());
    child.kill("SIGTERM");
  });
}

export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), "forkloop-redis-"));
  let lastError: unknown;
  for (let tries = 0; tries < 5; tries++) {
    const port = await freePort();
    try {
      let child = await launch(port, dir, options);
      return {
        url: `redis://${options.bind ?? "127.0.0.1"}:${port}`,
        port,
        dir,
        async restart(restart = {}) {
          await stopChild(child);
          await new Promise((resolve) => setTimeout(resolve, restart.downMs ?? 0));
          child = await launch(port, dir, options);
        },
        async stop() {
          await stopChild(child);
          await rm(dir, { recursive: true, force: true });
        },
      };
    } catch (error) {
      lastError = error; // the port was taken between the probe and the start: another one
    }
  }
  await rm(dir, { recursive: true, force: true });
  throw lastError;
}
