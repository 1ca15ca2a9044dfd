import { readFileSync } from "node:fs";

/**
 * The forkloop release version. Every published forkloop package carries the same one
 * (test/packaging.test.ts), so the SDK's own manifest speaks for the command too. Read at load
 * time from the package's package.json, which sits one directory above both `src/` and `dist/`.
 */
export const FORKLOOP_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
