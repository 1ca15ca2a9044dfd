/**
 * The difference model shared by the conformance harnesses. A difference has a code naming what
 * differs and where, in a stable vocabulary the allowlist matches (`field.missing result/success.errors`),
 * and a detail with the two values. "missing": the peer (the real Agent SDK or Claude Code) has
 * it and forkloop does not; "extra": forkloop has it and the peer does not.
 */
export interface Difference {
  code: string;
  detail: string;
}

export interface ProgramDifference extends Difference {
  program: string;
}

const MAX_DETAIL = 400;

export function show(value: unknown): string {
  const text = value === undefined ? "(absent)" : JSON.stringify(value);
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    isPlainObject(v) ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => x.localeCompare(y))) : v,
  );
}

/**
 * Field by field: a key one side lacks is `field.missing`/`field.extra` (not looked into), arrays
 * of objects of the same length are compared item by item, anything else unequal is
 * `field.value` with both values.
 */
export function diffFields(path: string, peer: unknown, forkloop: unknown, out: Difference[]): void {
  if (isPlainObject(peer) && isPlainObject(forkloop)) {
    for (const key of Object.keys(peer)) {
      if (!(key in forkloop))
        out.push({ code: `field.missing ${path}.${key}`, detail: `peer: ${show(peer[key])}` });
    }
    for (const key of Object.keys(forkloop)) {
      if (!(key in peer))
        out.push({ code: `field.extra ${path}.${key}`, detail: `forkloop: ${show(forkloop[key])}` });
      else diffFields(`${path}.${key}`, peer[key], forkloop[key], out);
    }
    return;
  }
  if (
    Array.isArray(peer) &&
    Array.isArray(forkloop) &&
    peer.length === forkloop.length &&
    peer.some((item) => isPlainObject(item) || Array.isArray(item))
  ) {
    for (const [i, item] of peer.entries()) diffFields(`${path}[${i}]`, item, forkloop[i], out);
    return;
  }
  if (!deepEqual(peer, forkloop)) {
    out.push({ code: `field.value ${path}`, detail: `peer:     ${show(peer)}\nforkloop: ${show(forkloop)}` });
  }
}

/** A longest common subsequence of two keyed sequences: the matched pairs and the rest. */
export function align<T>(
  peer: readonly T[],
  forkloop: readonly T[],
  key: (item: T) => string,
): { pairs: [T, T][]; onlyPeer: T[]; onlyForkloop: T[] } {
  const a = peer.map(key);
  const b = forkloop.map(key);
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      const row = table[i] as number[];
      row[j] =
        a[i] === b[j]
          ? ((table[i + 1] as number[])[j + 1] as number) + 1
          : Math.max((table[i + 1] as number[])[j] as number, row[j + 1] as number);
    }
  }
  const pairs: [T, T][] = [];
  const onlyPeer: T[] = [];
  const onlyForkloop: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      pairs.push([peer[i] as T, forkloop[j] as T]);
      i++;
      j++;
    } else if (((table[i + 1] as number[])[j] as number) >= ((table[i] as number[])[j + 1] as number)) {
      onlyPeer.push(peer[i++] as T);
    } else {
      onlyForkloop.push(forkloop[j++] as T);
    }
  }
  onlyPeer.push(...peer.slice(i));
  onlyForkloop.push(...forkloop.slice(j));
  return { pairs, onlyPeer, onlyForkloop };
}

/** Lines of two texts that differ, as a short unified view. */
export function lineDiff(peer: string, forkloop: string): string | undefined {
  if (peer === forkloop) return undefined;
  const a = peer.split("\n");
  const b = forkloop.split("\n");
  const { onlyPeer, onlyForkloop } = align(a, b, (line) => line);
  return [...onlyPeer.map((line) => `- ${line}`), ...onlyForkloop.map((line) => `+ ${line}`)]
    .join("\n")
    .slice(0, MAX_DETAIL * 2);
}

/**
 * Both sides' timelines in full (one signature a line, numbered) and their line diff: what a
 * failed comparison prints after its unexplained differences, so a difference seen once (an
 * order, a missing hook) can be read from the CI log without a second run.
 */
export function timelinesText(title: string, peer: readonly string[], forkloop: readonly string[]): string {
  const list = (side: string, items: readonly string[]) =>
    [`${title}, ${side} (${items.length}):`, ...items.map((item, i) => `  ${i + 1}. ${item}`)].join("\n");
  const diff = lineDiff(peer.join("\n"), forkloop.join("\n"));
  return [
    list("peer", peer),
    list("forkloop", forkloop),
    `${title}, diff: ${diff === undefined ? "(same order)" : `\n${diff}`}`,
  ].join("\n");
}
