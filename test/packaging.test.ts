import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  license?: string;
  repository?: { type: string; url: string; directory: string };
  files?: string[];
  scripts?: Record<string, string>;
  bin?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function manifests(): { dir: string; manifest: Manifest }[] {
  return ["packages", "apps"].flatMap((parent) =>
    readdirSync(join(root, parent)).map((name) => ({
      dir: `${parent}/${name}`,
      manifest: JSON.parse(readFileSync(join(root, parent, name, "package.json"), "utf8")) as Manifest,
    })),
  );
}

const release = (JSON.parse(readFileSync(join(root, "apps/forkloop/package.json"), "utf8")) as Manifest)
  .version;

/**
 * R-K4 (packaging): every package under packages/ and apps/ is published in lockstep with
 * `forkloop`. A new package copies these fields from its neighbours (see scripts/pack-release.mjs).
 */
describe("R-K4: publishable workspace manifests", () => {
  for (const { dir, manifest } of manifests()) {
    it(`${dir} (${manifest.name}) is publishable at the release version with pinned forkloop dependencies`, () => {
      expect(manifest.private, `${dir}: remove "private" — it is published`).toBeUndefined();
      expect(manifest.version).toBe(release);
      expect(manifest.license).toBe("MIT");
      expect(manifest.repository).toMatchObject({ type: "git", directory: dir });
      // dist only (and the bundle made from it, scripts/bundle-package.mjs): no sources, no
      // tests, no fixtures in the tarball.
      const bundled = manifest.scripts?.build?.includes("bundle-package.mjs") === true;
      expect(manifest.files?.filter((entry) => entry !== "bin")).toEqual(
        bundled ? ["dist", "bundle"] : ["dist"],
      );
      const internal = Object.entries({ ...manifest.dependencies, ...manifest.devDependencies }).filter(
        ([name]) => name.startsWith("@forkloop/") || name === "forkloop",
      );
      for (const [name, range] of internal) expect(`${name}@${range}`).toBe(`${name}@${release}`);
    });
  }

  it("only `forkloop` carries the `forkloop` bin, so npm ci links exactly one", () => {
    const withBin = manifests().filter(({ manifest }) => manifest.bin !== undefined);
    expect(withBin.map(({ manifest }) => [manifest.name, manifest.bin])).toEqual([
      ["forkloop", { forkloop: "bin/forkloop.js" }],
    ]);
    // The root is not called `forkloop`: `npx forkloop` in the clone must find the workspace's bin.
    expect((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Manifest).name).not.toBe(
      "forkloop",
    );
  });
});
