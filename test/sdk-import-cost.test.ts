import { execFile } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");

/** A loader hook in a data: URL that prints every module URL the process resolves, one a line. */
const TRACE_HOOKS = `data:text/javascript,${encodeURIComponent(
  "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(r.url + '\\n'); return r; }",
)}`;
const REGISTER = `import { register } from "node:module"; register(${JSON.stringify(TRACE_HOOKS)});`;

/** The modules a fresh process loads for `await import(entry)` (the built package, as users load it). */
async function modulesLoadedBy(entry: string): Promise<string[]> {
  const { stderr } = await run(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(REGISTER)}`,
      "--input-type=module",
      "-e",
      `await import(${JSON.stringify(entry)});`,
    ],
    { cwd: root },
  );
  return [...new Set(stderr.split("\n").filter((line) => line.startsWith("file:")))];
}

describe("R-V2: importing @forkloop/sdk loads only what a session needs first", () => {
  it("R-V2: the simulator is not loaded by the import (only its fault syntax and model registry); it loads when it starts", async () => {
    const loaded = await modulesLoadedBy(pathToFileURL(join(root, "packages/sdk/dist/index.js")).href);
    // Control: the trace sees the SDK's own modules.
    expect(loaded.some((url) => url.endsWith("/packages/sdk/dist/query.js"))).toBe(true);
    const simulator = loaded
      .filter((url) => url.includes("/packages/sim/dist/"))
      .map((url) => url.slice(url.indexOf("/packages/sim/dist/") + "/packages/sim/dist/".length));
    expect(simulator.sort()).toEqual(["faults.js", "model-registry.js", "model-table.js"]);
  });
});
