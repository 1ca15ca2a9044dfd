import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

/**
 * Hosts on one machine that talk only over a network (R-B1, R-V3): each host is a Linux network
 * namespace with one veth cable into a switch (a bridge in a namespace of its own), addressed
 * 10.213.N.1… in a /24 picked per network so two test files never share one. Processes run on a
 * host through `ip netns exec` (`launcher(host)`); `unplug(host)` takes a host off the network
 * the way a failed machine leaves it: its cable is removed and its name deleted, while whatever
 * ran there is cut off, not told. Needs root (CAP_NET_ADMIN) and iproute2; `canMakeHosts()` says
 * whether this machine can.
 */
export interface NetworkHosts {
  /** Each host's address on the network, by name. */
  readonly address: (host: string) => string;
  /** The address the machine itself has on the network (`withMachine`), where a test's own servers listen. */
  readonly machineAddress: string | undefined;
  /** The command prefix that runs a program on `host`. */
  readonly launcher: (host: string) => readonly string[];
  /** Removes the host's cable and its namespace: its processes live on, unreachable. */
  unplug(host: string): Promise<void>;
  /** Kills every process left on the hosts and deletes the namespaces (the cables go with them). */
  remove(): Promise<void>;
}

export interface NetworkHostsOptions {
  readonly hosts: readonly string[];
  /** Also cables the machine's own namespace to the switch, so its servers are reachable. */
  readonly withMachine?: boolean;
}

const ip = (...args: string[]) => run("ip", args);

/** Whether namespaces can be made here (root with iproute2); the reason when not. */
export async function canMakeHosts(): Promise<{ ok: true } | { ok: false; reason: string }> {
  const probe = `fl-probe-${process.pid}`;
  try {
    await ip("netns", "add", probe);
    await ip("netns", "delete", probe);
    return { ok: true };
  } catch (error) {
    return {
      ok: false,
      reason: `cannot create a network namespace (${(error as Error).message.split("\n")[0]}): needs root and iproute2`,
    };
  }
}

let networks = 0;

export async function startNetworkHosts(options: NetworkHostsOptions): Promise<NetworkHosts> {
  // Short names: interface names are at most 15 bytes.
  const tag = `${process.pid % 10_000}${networks}`;
  const subnet = `10.213.${(process.pid * 7 + networks++) % 250}`;
  const namespace = (host: string) => `fl${tag}-${host}`;
  const switchNs = `fl${tag}-sw`;
  const addresses = new Map(options.hosts.map((host, index) => [host, `${subnet}.${index + 1}`]));
  const created: string[] = [];
  /** Processes of unplugged hosts: their namespaces have no name left to find them by. */
  const orphans: number[] = [];
  const remove = async () => {
    for (const ns of created.splice(0).reverse()) {
      const pids = await ip("netns", "pids", ns).then(
        (out) => out.stdout.split("\n").filter(Boolean),
        () => [],
      );
      for (const pid of pids) {
        try {
          process.kill(Number(pid), "SIGKILL");
        } catch {
          // already gone
        }
      }
      await ip("netns", "delete", ns).catch(() => undefined);
    }
  };
  /** One cable: `outer` on the switch's bridge, `inner` in `ns` (or the machine's namespace) with `address`. */
  const cable = async (name: string, ns: string | undefined, address: string) => {
    const outer = `v${tag}${name}`.slice(0, 15);
    const inner = `e${tag}${name}`.slice(0, 15);
    await ip("link", "add", outer, "type", "veth", "peer", "name", inner);
    await ip("link", "set", outer, "netns", switchNs);
    await ip("-n", switchNs, "link", "set", outer, "master", "br0", "up");
    if (ns !== undefined) await ip("link", "set", inner, "netns", ns);
    const inside = ns === undefined ? [] : ["-n", ns];
    await ip(...inside, "addr", "add", `${address}/24`, "dev", inner);
    await ip(...inside, "link", "set", inner, "up");
  };
  try {
    await ip("netns", "add", switchNs);
    created.push(switchNs);
    await ip("-n", switchNs, "link", "add", "br0", "type", "bridge");
    await ip("-n", switchNs, "link", "set", "br0", "up");
    for (const host of options.hosts) {
      const ns = namespace(host);
      await ip("netns", "add", ns);
      created.push(ns);
      await ip("-n", ns, "link", "set", "lo", "up");
      await cable(host, ns, addresses.get(host) as string);
    }
    // The machine's cable dies with the switch's namespace, so `remove()` needs no step for it.
    if (options.withMachine) await cable("m", undefined, `${subnet}.254`);
  } catch (error) {
    await remove();
    throw error;
  }
  const known = (host: string) => {
    if (!addresses.has(host))
      throw new Error(`no host ${host} on this network (${options.hosts.join(", ")})`);
    return host;
  };
  return {
    address: (host) => addresses.get(known(host)) as string,
    machineAddress: options.withMachine ? `${subnet}.254` : undefined,
    launcher: (host) => ["ip", "netns", "exec", namespace(known(host))],
    async unplug(host) {
      const ns = namespace(known(host));
      await ip("-n", switchNs, "link", "delete", `v${tag}${host}`.slice(0, 15));
      // The name goes; the namespace lives on as long as its processes do (cut off), and
      // `remove()` still kills them through the list it keeps.
      const pids = await ip("netns", "pids", ns).then((out) => out.stdout);
      await ip("netns", "delete", ns);
      created.splice(created.indexOf(ns), 1);
      orphans.push(...pids.split("\n").filter(Boolean).map(Number));
    },
    async remove() {
      for (const pid of orphans.splice(0)) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await remove();
    },
  };
}
