/**
 * A workspace package's published JavaScript as a few files (R-V2): run from the package's
 * directory after `tsc`, it bundles the built modules in dist/ into bundle/, one entry per
 * subpath export (its `types` path names the built file) plus the worker-thread entries (the
 * package's `sideEffects` list), so importing `@forkloop/sdk` does not resolve and load hundreds of
 * modules one by one. Every bare import stays outside — the other @forkloop packages among them —
 * so each class (errors checked with instanceof, the worker pool) exists once however many
 * @forkloop packages a program installs — except the few third-party packages INLINED names.
 * A lazy `import()` stays lazy: it becomes its own chunk.
 * bundle/ sits beside dist/, so `new URL("../package.json", import.meta.url)` and the worker
 * entries found beside the code (`./worker.js`) resolve as they do from dist/. The `./testing`
 * subpaths stay unbundled: they point at files beside dist/'s modules and serve tests only.
 * bundle/modules.json names the built modules in each file (test/sdk-import-cost.test.ts reads it
 * to tell which of them an import loads).
 *
 * usage: node ../../scripts/bundle-package.mjs   (from packages/<name>)
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { isBuiltin } from "node:module";
import { basename, join, relative, sep } from "node:path";
import { build } from "rolldown";

const pkg = process.cwd();
const out = join(pkg, "bundle");
const manifest = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8"));

/** Subpath → built file: `"./errors"` → `{ errors: "dist/errors.js" }`, `"."` → `index`. */
const entries = {};
for (const [subpath, target] of Object.entries(manifest.exports)) {
  if (subpath === "./testing") continue;
  const name = subpath === "." ? "index" : subpath.slice(2).replaceAll("/", "-");
  const wanted = `./bundle/${name}.js`;
  if (target.default !== wanted) {
    console.error(`bundle: ${manifest.name} exports["${subpath}"].default must be "${wanted}"`);
    process.exit(1);
  }
  entries[name] = join(pkg, target.types.replace(/\.d\.ts$/, ".js"));
}
const workers = Object.fromEntries(
  (Array.isArray(manifest.sideEffects) ? manifest.sideEffects : [])
    .filter((file) => file.startsWith("./dist/") && !file.startsWith("./dist/testing/"))
    .map((file) => [basename(file, ".js"), join(pkg, file)]),
);

// Chunk names carry a content hash: clear the last build's so stale chunks are never published.
rmSync(out, { recursive: true, force: true });

/**
 * Third-party packages bundled into a package's files, with what they import in turn. The official
 * SDK goes into loop-core's, whose `loadAnthropicSdk` is its one loader: its three hundred modules
 * and its tracing dependency's become one chunk, loaded at the first model client as before, not
 * file by file (R-V2). No forkloop code checks its classes with instanceof: its errors are told by
 * their shape (loop-core's model-failure.ts), so a client from another copy — a caller's own, a
 * worker's — fails the same way. The package still declares it (its types, the worker's client).
 */
const INLINED = { "@forkloop/loop-core": ["@anthropic-ai/sdk"] }[manifest.name] ?? [];
const inlined = (id) => INLINED.some((name) => id === name || id.startsWith(`${name}/`));
const inNodeModules = (file) => file?.split(sep).includes("node_modules") === true;

/**
 * Every bare specifier (node: built-ins, dependencies, the other @forkloop packages) stays
 * outside, but an INLINED package's and its own imports' (bundled with it).
 */
const external = (id, importer) =>
  isBuiltin(id) ||
  (!id.startsWith(".") &&
    !id.startsWith("/") &&
    !id.startsWith("\0") &&
    !inlined(id) &&
    !inNodeModules(importer));
const bundle = (input, prefix) =>
  build({
    input,
    external,
    platform: "node",
    logLevel: "warn",
    output: {
      dir: out,
      format: "esm",
      entryFileNames: "[name].js",
      chunkFileNames: `${prefix}-[name]-[hash].js`,
      sourcemap: false,
    },
  });
const outputs = [await bundle(entries, "chunk")];
// A worker thread's entry on its own, so a cold thread loads none of the main thread's chunks.
if (Object.keys(workers).length > 0) outputs.push(await bundle(workers, "worker-chunk"));

/** Bundled file → its modules, as paths under the package (`dist/tools/bash.js`). */
const modules = {};
for (const chunk of outputs.flatMap(({ output }) => output).filter((file) => file.type === "chunk")) {
  modules[chunk.fileName] = chunk.moduleIds.map((id) => relative(pkg, id).split(sep).join("/")).sort();
  // With INLINED's packages comes the bundler's own helper for their CommonJS modules.
  const foreign = modules[chunk.fileName].filter(
    (path) =>
      !path.startsWith("dist/") &&
      !(INLINED.length > 0 && (inNodeModules(path.split("/").join(sep)) || path === "\0rolldown/runtime.js")),
  );
  if (foreign.length > 0) {
    console.error(
      `bundle: ${manifest.name}'s ${chunk.fileName} inlines ${foreign.join(", ")}: only its own dist/ (and INLINED's packages) belongs in it`,
    );
    process.exit(1);
  }
}
writeFileSync(join(out, "modules.json"), `${JSON.stringify(modules, null, 2)}\n`);
