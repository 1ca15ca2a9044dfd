/**
 * R-A6: a package's index exports what other code needs. The value exports that no file outside
 * the package imports (other packages, apps, test, bench, examples, scripts) are listed in
 * test/exports-snapshot/unused.txt: a new unused export fails here, and so does one that gained a
 * user or was removed, until the list is updated on purpose (`-u`, the diff reviewed) — the list
 * only ever shrinks by review. `forkloop` is left out: it is the SDK's names under the installed
 * name (exports-snapshot.test.ts proves that), and an import from it counts for @forkloop/sdk.
 * The SDK's own entries are API for programs outside this repository (every name the Agent SDK
 * exports stays), so its list is what the repository does not use, not what may go.
 *
 * A dead export is worse: no file imports it at all, inside its package or outside (used only in
 * the file that defines it, or nowhere). None may exist, and no `-u` makes one pass — at an entry,
 * nor in any module of a package's source (an `export` no other file names).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  deadExports,
  moduleDeadExports,
  packageEntries,
  repoRoot,
  unusedExports,
} from "./support/package-exports.js";

describe("R-A6 no unreviewed unused exports", () => {
  it("the value exports no file outside their package imports are the reviewed list", async () => {
    const unused = await unusedExports(packageEntries());
    const sections = [...unused]
      .filter(([specifier]) => specifier !== "forkloop")
      .map(
        ([specifier, names]) =>
          `[${specifier}] ${names.length}\n${names.map((name) => `${name}\n`).join("")}`,
      );
    // A control: the scan sees imports at all (the SDK's query() is imported by tests and examples).
    expect(unused.get("@forkloop/sdk")).not.toContain("query");
    await expect(sections.join("\n")).toMatchFileSnapshot(
      join(repoRoot, "test", "exports-snapshot", "unused.txt"),
    );
  }, 120_000);

  it("no dead exports: every value an entry exports is imported by some file (the SDK's API aside)", async () => {
    const dead = [...(await deadExports(packageEntries()))]
      // The SDK's names are API for programs outside this repository (see above); `forkloop` is the SDK.
      .filter(([specifier]) => specifier !== "forkloop" && !specifier.startsWith("@forkloop/sdk"))
      .filter(([, names]) => names.length > 0);
    expect(Object.fromEntries(dead)).toEqual({});
  }, 120_000);

  it("no dead exports inside the packages: every value a source module exports is named by another file", () => {
    expect(moduleDeadExports(packageEntries())).toEqual([]);
  });

  it("control: a module's export no other file names is found; one another file names, an entry's, and a test's are not", async () => {
    const root = await mkdtemp(join(tmpdir(), "forkloop-dead-exports-"));
    try {
      const src = join(root, "packages", "demo", "src");
      await mkdir(src, { recursive: true });
      // Names built here, so this file's own text does not mention them.
      const [dead, live, api] = ["dead", "live", "api"].map((word) => `${word}Name${process.pid}`);
      await writeFile(join(src, "module.ts"), `export const ${dead} = 1;\nexport function ${live}() {}\n`);
      await writeFile(join(src, "other.ts"), `import { ${live} } from "./module.js";\n`);
      await writeFile(join(src, "index.ts"), `export const ${api} = 2;\n`);
      await writeFile(join(src, "module.test.ts"), `export const ${dead}Test = 3;\n`);
      const entry = {
        packageName: "demo",
        dir: "packages/demo",
        subpath: ".",
        specifier: "demo",
        file: "packages/demo/src/index.ts",
      };
      expect(moduleDeadExports([entry], root)).toEqual([`packages/demo/src/module.ts ${dead}`]);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
