// What `npm test` does before vitest, in two lanes at once: the peers' installs (the real Agent SDK
// and Claude Code the conformance suites compare with; mostly waiting on npm's cache and the disk)
// beside the build, typecheck and lint (CPU). One after the other they took about 37 s + 40 s of
// a clean-clone CI. Nothing in one lane reads what the other writes: the peers go to ignored
// directories that the typecheck excludes (test/tsconfig.json) and biome skips (node_modules).
// Exits with the first failing step's code, after both lanes have ended.
import { spawn } from "node:child_process";

const root = new URL("..", import.meta.url);

/** Runs one command with this process's output; resolves to its exit code. */
function step(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, stdio: "inherit" });
    child.on("error", (error) => {
      console.error(`${command} ${args.join(" ")}: ${error.message}`);
      resolve(1);
    });
    child.on("exit", (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** Runs steps in order, stopping at the first that fails; resolves to its code (0 if none). */
async function lane(steps) {
  for (const [command, ...args] of steps) {
    const code = await step(command, args);
    if (code !== 0) return code;
  }
  return 0;
}

const codes = await Promise.all([
  Promise.all([
    lane([["node", "test/agent-sdk-compat/ensure-installed.mjs"]]),
    lane([["node", "test/conformance/support/ensure-peers.mjs"]]),
  ]).then((both) => both.find((code) => code !== 0) ?? 0),
  lane([
    ["npm", "run", "build"],
    ["npm", "run", "typecheck"],
    ["npm", "run", "lint"],
  ]),
]);
process.exit(codes.find((code) => code !== 0) ?? 0);
