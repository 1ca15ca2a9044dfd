// Writes .ci/file-seconds.json from a CI log: each test file's seconds as vitest's default
// reporter printed them (hooks included; vitest's JSON report leaves beforeAll out), for files of
// 3 s or more. vitest.config.ts starts the longest files of a tier first, so no tier ends waiting
// on one long file that started last. A stale table only changes the order, never a verdict.
// Usage: node .ci/file-seconds.mjs CI-LOG > .ci/file-seconds.json
import { readFileSync } from "node:fs";
import { stripVTControlCharacters } from "node:util";

const text = stripVTControlCharacters(readFileSync(process.argv[2], "utf8"));
const seconds = {};
for (const match of text.matchAll(/^ [✓×❯] +\w+ +(\S+\.test\.ts) \(\d+ tests?[^)]*\) *(\d+)ms/gm)) {
  const value = Math.round(Number(match[2]) / 1000);
  if (value >= 3) seconds[match[1]] = value;
}
const sorted = Object.fromEntries(
  Object.entries(seconds).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)),
);
console.log(JSON.stringify(sorted, null, 2));
