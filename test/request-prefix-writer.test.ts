import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..");

/** Production sources: no tests, no test doubles (`testing/`, `test-support/`). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name === "testing" || name === "test-support" || name === "node_modules" || name === "dist"
        ? []
        : sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

const sources = ["packages", "apps"].flatMap((top) =>
  readdirSync(join(root, top)).flatMap((pkg) => {
    const src = join(root, top, pkg, "src");
    return statSync(src, { throwIfNoEntry: false })?.isDirectory() ? sourceFiles(src) : [];
  }),
);

/**
 * Files (relative to the root) whose code matches `pattern`, comments left out, and "strings" too
 * unless the pattern is about one (a message may name a function without calling it).
 */
function filesMatching(pattern: RegExp, keepStrings = false): string[] {
  return sources
    .filter((file) => {
      const code = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "");
      return pattern.test(keepStrings ? code : code.replace(/"(?:[^"\\\n]|\\.)*"/g, '""'));
    })
    .map((file) => relative(root, file))
    .sort();
}

describe("R-A2/R-F3: the request prefix has one writer", () => {
  it("only loop-core builds system blocks and tool definitions, and a batch its root prefix", () => {
    expect(
      filesMatching(/\b(buildCacheSafeParams|toolDefinitions|toolDefinition|buildSystemBlocks)\(/),
    ).toEqual([
      // A batch's shared prefix: a root no request precedes, built through the loop's builder.
      "packages/batch/src/batch-prefix.ts",
      "packages/loop-core/src/build-request.ts",
      "packages/loop-core/src/cache-safe-params.ts",
      "packages/loop-core/src/loop-run.ts",
    ]);
  });

  it("the loop builds it once per iteration and announces it on request_start, nowhere else", () => {
    const loopCore = join(root, "packages/loop-core/src");
    const calls = sourceFiles(loopCore).flatMap((file) =>
      [...readFileSync(file, "utf8").matchAll(/(?<!function )\brequestPrefix\(/g)].map(() =>
        relative(loopCore, file),
      ),
    );
    expect(calls).toEqual(["query.ts"]);
    expect(filesMatching(/type: "request_start",[^}]*\bprefix\b/, true)).toEqual([
      "packages/loop-core/src/model-attempt.ts",
    ]);
  });

  it("a session keeps the prefix a request_start carried and writes it nowhere else", () => {
    const session = readFileSync(join(root, "packages/orchestrator/src/main-session.ts"), "utf8");
    const writes = [...session.matchAll(/\blatest\s*=(?!=)\s*([^;]+);/g)].map((match) => match[1]);
    expect(writes).toEqual(["event.prefix"]);
  });
});

describe("R-A4: one run-environment resolver", () => {
  it("query(), forkloop batch and forkloop worker load settings, sandbox, MCP servers and deadlines only through it", () => {
    // Their definitions aside, the resolver is their only caller.
    const loaders =
      /(?<!function )\b(loadRunSettings|resolveSandbox|resolveMcpServers|withSettingsRetryEnv)\(/;
    expect(filesMatching(loaders)).toEqual(["packages/sdk/src/run-environment.ts"]);
    // forkloop worker's environment is resolved by the queue service it starts.
    expect(filesMatching(/(?<!function )\bresolveRunEnvironment\(/)).toEqual([
      "apps/cli/src/commands/batch.ts",
      "packages/batch/src/queue-service.ts",
      "packages/sdk/src/query-options.ts",
    ]);
  });

  it("their MCP servers start only through it, and each closes the environment, not its parts", () => {
    expect(filesMatching(/(?<!function )\b(startSessionMcp|mcpServersOnDemand)\(/)).toEqual([
      "packages/sdk/src/run-environment.ts",
    ]);
    // Each caller closes the environment; a part closed by hand beside it is the double
    // bookkeeping close() replaces.
    const callers = [
      "apps/cli/src/commands/batch.ts",
      "packages/batch/src/queue-service.ts",
      "packages/sdk/src/query.ts",
    ];
    const closing = filesMatching(/\b(run|environment)\.close\(\)/);
    const byHand = filesMatching(/\b(mcp|source)\??\.close\(\)/);
    expect(callers.filter((file) => closing.includes(file) && !byHand.includes(file))).toEqual(callers);
  });
});
