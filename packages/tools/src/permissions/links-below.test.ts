import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createTempWorkspace, useTempWorkspace } from "../testing/index.js";
import { isInside } from "../workspace-paths.js";
import { outsideInodeBelow } from "./links-below.js";

const ws = useTempWorkspace();

describe("R-S4: what a recursive read of contents may reach below a directory", () => {
  const options = (throughSymlinks: boolean, maxEntries?: number) => ({
    throughSymlinks,
    inside: (real: string) => isInside(real, ws.root),
    ...(maxEntries === undefined ? {} : { maxEntries }),
  });

  it("R-S4: a tree too large to check needs approval rather than being assumed clean", () => {
    for (let index = 0; index < 5; index++) writeFileSync(join(ws.root, `f${index}`), "x");
    expect(outsideInodeBelow(ws.root, options(false))).toBeUndefined();
    expect(outsideInodeBelow(ws.root, options(false, 3))).toMatch(/more than 3 entries below/);
  });

  it("R-S4: through a symlinked directory inside the workspace, a hard link there is found (once per directory, no loop)", () => {
    const outside = createTempWorkspace("forkloop-links-outside-");
    try {
      writeFileSync(join(outside.root, "s"), "secret");
      mkdirSync(join(ws.root, "a"));
      mkdirSync(join(ws.root, "b"));
      linkSync(join(outside.root, "s"), join(ws.root, "b/inner"));
      symlinkSync(join(ws.root, "b"), join(ws.root, "a/to-b"));
      symlinkSync(join(ws.root, "a"), join(ws.root, "a/loop"));
      expect(outsideInodeBelow(join(ws.root, "a"), options(false))).toBeUndefined();
      expect(outsideInodeBelow(join(ws.root, "a"), options(true))).toMatch(
        /b\/inner, which has 2 hard links/,
      );
    } finally {
      outside.cleanup();
    }
  });
});
