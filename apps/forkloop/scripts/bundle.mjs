/**
 * The installed `forkloop` package as a few files (R-V2): the CLI, the SDK and the two worker
 * threads' entries bundled from the workspace packages' built JavaScript, so a one-shot run does
 * not resolve and load hundreds of modules. Everything lands flat in dist/: code finds the worker
 * entries and the report page beside itself (`new URL("./worker.js", import.meta.url)`), and the
 * SDK's version in `../package.json`. Packages loaded with a runtime `require` on first use
 * (piscina, ajv, msgpackr, yaml, …) stay outside and resolve from the installed dependencies.
 * Each workspace package declares its modules free of import-time effects (`sideEffects` in its
 * package.json; worker entries aside), so a name taken from a package index brings only what it
 * needs: `forkloop run` does not load the queue backend for one formatter of @forkloop/batch.
 */
import { cpSync, existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire, isBuiltin } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";

/** Required inside a try, with a fallback: optional native speed-ups. */
const OPTIONAL = new Set([
  "msgpackr-extract",
  // debug's colours, and the queue backends bullmq supports beside Redis (forkloop uses Redis).
  "supports-color",
  "@valkey/valkey-glide",
  "pg",
]);

const app = fileURLToPath(new URL("..", import.meta.url));
const dist = join(app, "dist");
const require = createRequire(join(app, "package.json"));
/** A file of a workspace package as built (its JavaScript in dist/, not its TypeScript source). */
function built(name, file) {
  let dir = dirname(require.resolve(name));
  while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
  return join(dir, file);
}

// Chunk names carry a content hash, so a rebuild writes new chunks beside the old ones; a dist/
// that is never cleared (turbo restores it whole from its cache) grew past 500 stale chunks, all
// of them published and installed. The last build's chunks are the only ones loaded.
for (const name of existsSync(dist) ? readdirSync(dist) : []) {
  if (/^(?:worker-)?chunk-.*\.js$/.test(name)) rmSync(join(dist, name));
}

/** One bundle of `input`; its shared chunks named with `prefix`. */
const bundle = (input, prefix, external = []) =>
  build({
    input,
    external,
    platform: "node",
    logLevel: "warn",
    output: {
      dir: dist,
      format: "esm",
      entryFileNames: "[name].js",
      chunkFileNames: `${prefix}-[name]-[hash].js`,
      sourcemap: false,
    },
  });
await bundle(
  {
    index: built("@forkloop/sdk", "bundle/index.js"),
    cli: built("@forkloop/cli", "dist/main.js"),
    "grep-thread.worker": built("@forkloop/tools", "bundle/grep-thread.worker.js"),
    "pdf-thread.worker": built("@forkloop/tools", "bundle/pdf-thread.worker.js"),
  },
  "chunk",
);
// The sub-agent thread's entry on its own: sharing chunks with the CLI made a cold thread
// compile what only the main thread uses — the whole API client (1.1 MB, every resource) where
// the worker's client needs Messages alone — before its first fork could start (R-V2). The full
// client stays outside: only the loop's default for a call given no client (never in a worker)
// imports it, and bundled it would pull every resource back in beside the worker's own.
await bundle({ worker: built("@forkloop/orchestrator", "bundle/worker.js") }, "worker-chunk", [
  /^@anthropic-ai\/sdk$/,
]);
cpSync(built("@forkloop/report", "dist/page"), join(dist, "page"), { recursive: true });

// A package the bundle requires at run time must be this package's own dependency: under an
// isolated install (pnpm, npm's linked strategy) nothing else makes it resolvable from here.
const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8"));
const missing = [...runtimeRequires(dist)].filter((name) => manifest.dependencies?.[name] === undefined);
if (missing.length > 0) {
  console.error(
    `bundle: dist/ requires ${missing.join(", ")} at run time, which apps/forkloop/package.json does not list: add each to its dependencies at the version the workspace pins`,
  );
  process.exit(1);
}

/**
 * Package names of the bundle's run-time `require("name")` calls (node: built-ins aside; not the
 * ones in generated-code templates, which follow a backtick).
 */
function runtimeRequires(dir) {
  const call =
    /(?<!`)\b(?:require|requireOnUse\$?\d*|__require|createRequire\(import\.meta\.url\))\("([^".][^"]*)"\)/g;
  const names = new Set();
  for (const file of readdirSync(dir).filter((name) => name.endsWith(".js"))) {
    for (const [, specifier] of readFileSync(join(dir, file), "utf8").matchAll(call)) {
      const name = specifier
        .split("/")
        .slice(0, specifier.startsWith("@") ? 2 : 1)
        .join("/");
      if (!isBuiltin(name) && !OPTIONAL.has(name)) names.add(name);
    }
  }
  return names;
}
