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
 * the file that defines it, or nowhere). None may exist, and no `-u` makes one pass.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { deadExports, packageEntries, repoRoot, unusedExports } from "./support/package-exports.js";

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
});
