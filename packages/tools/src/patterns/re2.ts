import { createRequire } from "node:module";

/**
 * re2js, the linear-time regex engine of globs, rules and Grep (R-V2: required when the first
 * pattern is compiled, not when the package is imported — a session without such a pattern never
 * loads it). One copy for every caller: its CommonJS build.
 */
let loaded: typeof import("re2js") | undefined;

export function re2(): typeof import("re2js") {
  loaded ??= createRequire(import.meta.url)("re2js") as typeof import("re2js");
  return loaded;
}
