import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/** SPEC §0: which workspace packages each package may import. */
const allowed: Record<string, readonly string[]> = {
  "packages/sim": [],
  "packages/loop-core": [],
  "packages/tools": ["loop-core"],
  "packages/compaction": ["loop-core"],
  "packages/mcp": ["loop-core"],
  "packages/orchestrator": ["loop-core", "tools", "compaction"],
  // The embedded simulator is the SDK's default endpoint when no API key is set.
  "packages/sdk": ["orchestrator", "loop-core", "tools", "compaction", "sim", "mcp"],
  // Reads transcripts (orchestrator) and prices (loop-core); the batch journal comes in as data.
  "packages/report": ["orchestrator", "loop-core"],
  // Batches sit on the library layer: the sdk's settings, endpoint and errors, and what is below it.
  "packages/batch": ["sdk", "orchestrator", "loop-core", "tools", "compaction", "mcp"],
  "apps/cli": ["batch", "sdk", "orchestrator", "report", "sim", "loop-core", "tools", "compaction"],
  // The package users install: the CLI's bin and the SDK's exports, nothing of its own.
  "apps/forkloop": ["cli", "sdk"],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    // test-support/ holds test fixtures (excluded from the build); tests may use the simulator.
    if (statSync(path).isDirectory()) return name === "test-support" ? [] : sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

describe("SPEC §0 dependency direction", () => {
  for (const [pkg, may] of Object.entries(allowed)) {
    it(`${pkg} imports only ${may.length ? may.join(", ") : "no sibling"}`, () => {
      const imported = new Set<string>();
      for (const file of sourceFiles(join(root, pkg, "src"))) {
        for (const match of readFileSync(file, "utf8").matchAll(/from\s+"@forkloop\/([\w-]+)/g)) {
          imported.add(match[1] ?? "");
        }
      }
      const manifest = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8"));
      for (const dep of Object.keys(manifest.dependencies ?? {})) {
        if (dep.startsWith("@forkloop/")) imported.add(dep.slice("@forkloop/".length));
      }
      expect([...imported].filter((name) => !may.includes(name))).toEqual([]);
    });
  }
});
