// Installs the Claude Agent SDK's type declarations for test/agent-sdk-types.test.ts, once per
// lockfile: `npm ci --omit=optional --ignore-scripts` leaves out the SDK's optional native Claude
// Code binary (never run here), so only declarations and their peer packages are fetched.
import { execFileSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const dir = dirname(fileURLToPath(import.meta.url));
const installed = join(dir, "node_modules", ".package-lock.json");
const lock = join(dir, "package-lock.json");
if (!existsSync(installed) || statSync(installed).mtimeMs < statSync(lock).mtimeMs) {
  execFileSync("npm", ["ci", "--omit=optional", "--ignore-scripts", "--no-audit", "--no-fund"], {
    cwd: dir,
    stdio: "inherit",
  });
}
