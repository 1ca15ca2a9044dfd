import { isIP } from "node:net";

/**
 * Address ranges WebFetch never connects to unless the host is allowed explicitly (R-T6): a
 * model that reads a hostile page could otherwise make forkloop fetch the machine's own services,
 * the cloud metadata endpoint (169.254.169.254) or the LAN — server-side request forgery. Judged
 * on the address the connection is made to (after DNS, on every redirect hop), never on the name.
 */
const BLOCKED_V4: readonly (readonly [string, number, string])[] = [
  ["0.0.0.0", 8, "this network"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved"],
];

function v4ToNumber(address: string): number {
  return address.split(".").reduce((value, part) => value * 256 + Number(part), 0);
}

function blockedV4(address: string): string | undefined {
  const value = v4ToNumber(address);
  for (const [base, bits, why] of BLOCKED_V4) {
    const size = 2 ** (32 - bits);
    const start = v4ToNumber(base);
    if (value >= start && value < start + size) return why;
  }
  return undefined;
}

/** The 8 16-bit groups of an IPv6 address (with an embedded dotted IPv4 tail expanded). */
function v6Groups(address: string): number[] {
  let text = address.toLowerCase().split("%")[0] ?? "";
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted?.[1]) {
    const value = v4ToNumber(dotted[1]);
    text = `${text.slice(0, -dotted[1].length)}${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const parse = (part: string) =>
    part === "" ? [] : part.split(":").map((group) => Number.parseInt(group, 16));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const missing = 8 - front.length - back.length;
  return [...front, ...Array<number>(Math.max(0, missing)).fill(0), ...back];
}

function blockedV6(address: string): string | undefined {
  const groups = v6Groups(address);
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embeddedV4 = () => `${g6 >> 8}.${g6 & 0xff}.${g7 >> 8}.${g7 & 0xff}`;
  if (groups.every((group) => group === 0)) return "unspecified";
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1)
    return "loopback";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible) reach the IPv4 address.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && (g5 === 0xffff || g5 === 0)) {
    return blockedV4(embeddedV4());
  }
  // ::ffff:0:a.b.c.d (IPv4-translated, ::ffff:0:0/96, RFC 2765) is a SIIT translator's form of it.
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0xffff && g5 === 0) {
    return blockedV4(embeddedV4());
  }
  // NAT64 (64:ff9b::/96) reaches the embedded IPv4 address through the gateway.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) {
    return blockedV4(embeddedV4());
  }
  // Local-use NAT64 (64:ff9b:1::/48, RFC 8215) translates into the operator's own networks, with
  // the IPv4 address at a place the operator chooses: the whole prefix is local.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 1) return "local-use NAT64";
  // 6to4 (2002::/16) embeds an IPv4 address in groups 1-2.
  if (g0 === 0x2002) return blockedV4(`${g1 >> 8}.${g1 & 0xff}.${g2 >> 8}.${g2 & 0xff}`);
  // Teredo (2001::/32, RFC 4380) tunnels to an IPv4 client hidden (inverted) in the last groups,
  // and through a relay the host chooses: refused whole, as the client's address cannot be trusted.
  if (g0 === 0x2001 && g1 === 0) return "Teredo tunnel";
  if (g0 === 0x2001 && g1 === 2 && g2 === 0) return "benchmarking";
  if (g0 === 0x100 && g1 === 0 && g2 === 0 && g3 === 0) return "discard-only";
  if ((g0 & 0xfff0) === 0x3ff0) return "documentation";
  if ((g0 & 0xfe00) === 0xfc00) return "unique local (private)";
  if ((g0 & 0xffc0) === 0xfe80) return "link-local";
  if ((g0 & 0xffc0) === 0xfec0) return "site-local";
  if ((g0 & 0xff00) === 0xff00) return "multicast";
  if (g0 === 0x2001 && g1 === 0x0db8) return "documentation";
  return undefined;
}

/** Why an address is not public (its range), or undefined for a public address. */
export function privateAddressReason(address: string): string | undefined {
  const family = isIP(address);
  if (family === 4) return blockedV4(address);
  if (family === 6) return blockedV6(address);
  return "not an IP address";
}
