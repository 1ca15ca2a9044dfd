import { lstatSync, readFileSync } from "node:fs";

/**
 * The host's unix socket files (R-S9): every named socket the kernel lists in `/proc/net/unix`
 * (path-bound sockets of this network namespace — docker's, a database's, an ssh or gpg agent's),
 * kept when the path is a socket now. Socket files are reachable across network namespaces, so the
 * sandbox binds /dev/null over those it would otherwise show. Not listed: sockets bound in another
 * network namespace whose files are visible here (a container's), and sockets made after this
 * list was read.
 */
export function hostSocketPaths(listing = "/proc/net/unix"): string[] {
  let text: string;
  try {
    text = readFileSync(listing, "utf8");
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of text.split("\n").slice(1)) {
    // `Num: RefCount Protocol Flags Type St Inode Path`, the path after one space (it may hold
    // spaces); an abstract name starts with @, an unnamed socket has none.
    const path = /^\s*[0-9a-fA-F]+: \S+ \S+ \S+ \S+ \S+\s+\d+ (\/.*)$/.exec(line)?.[1];
    if (path === undefined) continue;
    if (isSocket(path)) paths.add(path);
  }
  return [...paths].sort();
}

function isSocket(path: string): boolean {
  try {
    return lstatSync(path).isSocket();
  } catch {
    return false;
  }
}
