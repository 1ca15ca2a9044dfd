/**
 * R-A6: each package's public entries list the names they export in a committed file, so a new or
 * removed export fails here until the list is updated on purpose (`npx vitest run
 * test/exports-snapshot.test.ts -u`, and the diff is reviewed). Only value exports are listed: a
 * module's runtime keys. Type-only exports vanish at runtime; tsc and the declaration files cover them.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type PackageEntry, packageEntries, repoRoot, runtimeNames } from "./support/package-exports.js";

/** `forkloop` (apps/forkloop) is the SDK under the installed name: checked against it below. */
const INSTALLED = "forkloop";

function snapshotFile(packageName: string): string {
  return join(repoRoot, "test", "exports-snapshot", `${packageName.replace(/^@forkloop\//, "")}.txt`);
}

function byPackage(entries: readonly PackageEntry[]): Map<string, PackageEntry[]> {
  const grouped = new Map<string, PackageEntry[]>();
  for (const entry of entries)
    grouped.set(entry.packageName, [...(grouped.get(entry.packageName) ?? []), entry]);
  return grouped;
}

describe("R-A6 public surfaces are snapshot-tested per package", () => {
  const entries = packageEntries();
  for (const [packageName, own] of byPackage(entries)) {
    if (packageName === INSTALLED) continue;
    it(`${packageName}: every entry's value exports match test/exports-snapshot`, async () => {
      const sections: string[] = [];
      for (const entry of own) {
        sections.push(`[${entry.subpath}]\n${(await runtimeNames(entry)).join("\n")}\n`);
      }
      await expect(sections.join("\n")).toMatchFileSnapshot(snapshotFile(packageName));
    });
  }

  it("forkloop (the installed package) exports exactly @forkloop/sdk's public API", async () => {
    const installed = entries.filter((entry) => entry.packageName === INSTALLED);
    const sdk = entries.find((entry) => entry.specifier === "@forkloop/sdk");
    expect(installed.map((entry) => entry.subpath)).toEqual(["."]);
    expect(sdk).toBeDefined();
    if (!sdk || !installed[0]) return;
    const sdkNames = await runtimeNames(sdk);
    expect(sdkNames.length).toBeGreaterThan(0);
    expect(await runtimeNames(installed[0])).toEqual(sdkNames);
  });
});
