// What `npm test` does before vitest, in three lanes at once: the peers' installs (the real Agent
// SDK and Claude Code the conformance suites compare with; mostly waiting on npm's cache and the
// disk); the build and typecheck as one turbo run (each package's typecheck starts once the
// packages it imports are built, beside the builds still running, where `npm run build` then
// `npm run typecheck` left a core idle through each run's tail: build, typecheck and lint from a
// clean tree went from 219 s to 184 s on the loaded 2-core machine); and lint (biome, native; it
// skips dist/ and node_modules, the only things the other lanes write). The peers' lane and the
// build's took about 37 s + 40 s of a clean-clone CI one after the other. Nothing in one lane
// reads what another writes: the peers go to ignored directories that the typecheck excludes
// (test/tsconfig.json) and biome skips (node_modules).
// Exits with the first failing step's code, after every lane has ended.
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
  lane([["npx", "--no-install", "turbo", "run", "build", "typecheck"]]),
  lane([["npm", "run", "lint"]]),
]);
process.exit(codes.find((code) => code !== 0) ?? 0);
