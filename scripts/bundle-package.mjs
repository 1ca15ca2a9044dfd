/**
 * A workspace package's published JavaScript as a few files (R-V2): run from the package's
 * directory after `tsc`, it bundles the built modules in dist/ into bundle/, one entry per
 * subpath export (its `types` path names the built file) plus the worker-thread entries (the
 * package's `sideEffects` list), so importing `@forkloop/sdk` does not resolve and load hundreds of
 * modules one by one. Every bare import stays outside — the other @forkloop packages among them —
 * so each class (errors checked with instanceof, the worker pool) exists once however many
 * @forkloop packages a program installs. A lazy `import()` stays lazy: it becomes its own chunk.
 * bundle/ sits beside dist/, so `new URL("../package.json", import.meta.url)` and the worker
 * entries found beside the code (`./worker.js`) resolve as they do from dist/. The `./testing`
 * subpaths stay unbundled: they point at files beside dist/'s modules and serve tests only.
 * bundle/modules.json names the built modules in each file (test/sdk-import-cost.test.ts reads it
 * to tell which of them an import loads).
 *
 * usage: node ../../scripts/bundle-package.mjs   (from packages/<name>)
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
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

/** Every bare specifier (node: built-ins, dependencies, the other @forkloop packages) stays outside. */
const external = (id) => !id.startsWith(".") && !id.startsWith("/") && !id.startsWith("\0");
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
  const foreign = modules[chunk.fileName].filter((path) => !path.startsWith("dist/"));
  if (foreign.length > 0) {
    console.error(
      `bundle: ${manifest.name}'s ${chunk.fileName} inlines ${foreign.join(", ")}: only its own dist/ belongs in it`,
    );
    process.exit(1);
  }
}
writeFileSync(join(out, "modules.json"), `${JSON.stringify(modules, null, 2)}\n`);
