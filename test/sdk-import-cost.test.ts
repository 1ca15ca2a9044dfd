import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { startSimulator } from "@forkloop/sim";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = join(import.meta.dirname, "..");

/** A loader hook in a data: URL that prints every module URL the process resolves, one a line. */
const TRACE_HOOKS = `data:text/javascript,${encodeURIComponent(
  "export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write(r.url + '\\n'); return r; }",
)}`;
const REGISTER = `import { register } from "node:module"; register(${JSON.stringify(TRACE_HOOKS)});`;

/**
 * The built modules a fresh process loads for `await import(entry)` (the package as published),
 * a bundled file standing for the modules bundled into it.
 */
async function modulesLoadedBy(entry: string, then = ""): Promise<string[]> {
  return builtModules(await filesLoadedBy(entry, then));
}

/**
 * The files a fresh process loads for `await import(entry)`: ES modules as the loader hook
 * resolves them, then CommonJS files from the require cache (a `require` passes no ES loader
 * hook). `then` runs after the import, in the same process.
 */
async function filesLoadedBy(entry: string, then = ""): Promise<string[]> {
  return (await filesLoadedWith(entry, then)).files;
}

/** filesLoadedBy, in a process with the environment given (default this one's), and what it printed. */
async function filesLoadedWith(
  entry: string,
  then: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ files: string[]; stdout: string }> {
  const script = `import { createRequire } from "node:module";
const require = createRequire(${JSON.stringify(`${pathToFileURL(root).href}/`)});
await import(${JSON.stringify(entry)});
${then}
for (const file of Object.keys(require.cache)) process.stderr.write(pathToUrl(file) + "\\n");
function pathToUrl(file) { return "file://" + file; }`;
  const { stdout, stderr } = await run(
    process.execPath,
    ["--import", `data:text/javascript,${encodeURIComponent(REGISTER)}`, "--input-type=module", "-e", script],
    { cwd: root, env },
  );
  return { files: [...new Set(stderr.split("\n").filter((line) => line.startsWith("file:")))], stdout };
}

/** The npm packages among the loaded modules (`@scope/name` or `name`), each once. */
function packagesOf(urls: readonly string[]): string[] {
  const names = urls.flatMap((url) => {
    const match = /\/node_modules\/((?:@[^/]+\/)?[^/]+)\/(?!.*\/node_modules\/)/.exec(url);
    return match?.[1] === undefined ? [] : [match[1]];
  });
  return [...new Set(names)].sort();
}

/**
 * The built modules a traced file stands for: itself, or for a file of a package's bundle/ the
 * modules bundled into it, as bundle/modules.json lists them (scripts/bundle-package.mjs).
 */
function builtModules(urls: readonly string[]): string[] {
  return urls.flatMap((url) => {
    const bundled = /^(.*\/packages\/[^/]+\/)bundle\/([^/]+)$/.exec(url);
    if (bundled === null) return [url];
    const [, pkg = "", file = ""] = bundled;
    const listed = bundledModules(fileURLToPath(`${pkg}bundle/modules.json`))[file];
    if (listed === undefined) throw new Error(`${url} is not listed in its bundle's modules.json`);
    return listed.map((module) => `${pkg}${module}`);
  });
}
const manifests = new Map<string, Readonly<Record<string, readonly string[]>>>();
function bundledModules(file: string): Readonly<Record<string, readonly string[]>> {
  let listed = manifests.get(file);
  if (listed === undefined) {
    listed = JSON.parse(readFileSync(file, "utf8")) as Record<string, readonly string[]>;
    manifests.set(file, listed);
  }
  return listed;
}

/** The published entry (package.json's exports), as a program that imports `@forkloop/sdk` loads it. */
const SDK_ENTRY = pathToFileURL(join(root, "packages/sdk", publishedEntry("packages/sdk"))).href;
function publishedEntry(pkg: string): string {
  const manifest = JSON.parse(readFileSync(join(root, pkg, "package.json"), "utf8")) as {
    exports: { ".": { default: string } };
  };
  return manifest.exports["."].default;
}
/** Loaded at first use (R-V2): a session's first request, MCP server, sub-agent, pattern, shell command, frontmatter, transcript, Edit or Write. */
const ON_FIRST_USE = [
  "@anthropic-ai/sdk",
  "@modelcontextprotocol/sdk",
  "@opentelemetry/api",
  "ajv",
  "comlink",
  "diff",
  "msgpackr",
  "pdf-lib",
  "piscina",
  "re2js",
  "unbash",
  "yaml",
];

describe("R-V2: importing @forkloop/sdk loads only what a session needs first", () => {
  it("R-V2: the simulator is not loaded by the import (only its fault syntax, its error class and model registry); it loads when it starts", async () => {
    const loaded = await modulesLoadedBy(SDK_ENTRY);
    // Control: the trace sees the SDK's own modules.
    expect(loaded.some((url) => url.endsWith("/packages/sdk/dist/query.js"))).toBe(true);
    const simulator = loaded
      .filter((url) => url.includes("/packages/sim/dist/"))
      .map((url) => url.slice(url.indexOf("/packages/sim/dist/") + "/packages/sim/dist/".length));
    expect(simulator.sort()).toEqual(["faults.js", "model-registry.js", "model-table.js", "sim-error.js"]);
  });

  it("R-V2: the Anthropic SDK, the MCP SDK, the thread pool, ajv, jsdiff, msgpackr, re2js, the shell parser and yaml load at first use, not at import", async () => {
    const loaded = packagesOf(await modulesLoadedBy(SDK_ENTRY));
    expect(loaded.filter((name) => ON_FIRST_USE.includes(name))).toEqual([]);
    // Controls: the trace sees a package an ES import loads (zod) and one a require loads (yaml).
    expect(loaded).toContain("zod");
    const required = packagesOf(await modulesLoadedBy(SDK_ENTRY, 'require("yaml");'));
    expect(required).toContain("yaml");
  });
});

describe("R-V2: @forkloop/sdk is published as bundles", () => {
  it("R-V2: importing the published entry loads the workspace's code from a few bundled files, not one file per module", async () => {
    const files = (await filesLoadedBy(SDK_ENTRY)).filter((url) => url.includes("/packages/"));
    const modules = builtModules(files);
    // Control: the files stand for the hundreds of built modules a session's first request needs.
    expect(modules.length).toBeGreaterThan(200);
    expect(files.length).toBeLessThanOrEqual(40);
  });

  it("R-V2: each package's bundle holds only its own modules (loop-core's also the official SDK), so a class another @forkloop package also exports exists once", () => {
    const foreign = ["sdk", "orchestrator", "tools", "loop-core", "compaction", "mcp"].flatMap((pkg) => {
      const entry = publishedEntry(`packages/${pkg}`);
      expect(entry).toBe("./bundle/index.js");
      const listed = bundledModules(join(root, "packages", pkg, "bundle/modules.json"));
      // Control: the listing names the package's index among its modules.
      expect(Object.values(listed).flat()).toContain("dist/index.js");
      return Object.entries(listed).flatMap(([file, paths]) =>
        paths
          .filter((path) => !path.startsWith("dist/") && !(pkg === "loop-core" && inlinedSdk(path)))
          .map((path) => `${pkg}/bundle/${file}: ${path}`),
      );
    });
    expect(foreign).toEqual([]);
    // Control: loop-core's bundle holds the official SDK, in a chunk of its own that loads at the
    // first model client (the import test above), and nothing of the other packages' dependencies.
    const loopCore = bundledModules(join(root, "packages/loop-core/bundle/modules.json"));
    const sdkChunks = Object.entries(loopCore).filter(([, paths]) =>
      paths.some((path) => path.endsWith("node_modules/@anthropic-ai/sdk/client.mjs")),
    );
    expect(sdkChunks.map(([file]) => file)).toEqual([expect.stringMatching(/^chunk-/)]);
  });
});

/** What scripts/bundle-package.mjs inlines into loop-core's bundle: the official SDK and its own imports. */
function inlinedSdk(path: string): boolean {
  const inlined = [
    "@anthropic-ai/sdk",
    "@opentelemetry/api",
    "standardwebhooks",
    "@stablelib/base64",
    "fast-sha256",
  ];
  return (
    path === "\0rolldown/runtime.js" || inlined.some((name) => path.startsWith(`../../node_modules/${name}/`))
  );
}

/**
 * Workspace modules only a tool's or an Agent call's execution needs, loaded there at first use
 * (R-V2), by the directory-relative path under `packages/`: each group with the use that loads it.
 */
const WORKSPACE_ON_FIRST_USE: Readonly<Record<string, readonly string[]>> = {
  "a sub-agent's own worktree (isolation, its sweep on resume)": [
    "orchestrator/dist/isolated-sub-agent.js",
    "tools/dist/workspace/",
  ],
  "a background, moved or resumed sub-agent (the main agent's Agent call)": [
    "orchestrator/dist/background-agent.js",
    "orchestrator/dist/movable-fork.js",
    "orchestrator/dist/resume-agent.js",
  ],
  "a sandboxed Bash call's setup": [
    "tools/dist/sandbox/sandbox-call.js",
    "tools/dist/sandbox/hard-links.js",
    "tools/dist/sandbox/host-sockets.js",
    "tools/dist/sandbox/new-repositories.js",
    "tools/dist/sandbox/outside-links.js",
    "tools/dist/sandbox/unix-socket-filter.js",
  ],
  "WebFetch's fetch and page text": ["tools/dist/web/"],
  "an MCP server's tools (its first connection)": [
    "mcp/dist/mcp-tool.js",
    "mcp/dist/tool-content.js",
    "mcp/dist/tool-output.js",
  ],
  "the PDF and search threads (Read of a PDF, Grep)": [
    "tools/dist/pdf/pdf-thread.js",
    "tools/dist/grep/grep-thread.js",
    "tools/dist/tool-thread.js",
  ],
};

describe("R-V2: importing @forkloop/sdk leaves the execution-only workspace modules unloaded", () => {
  it("R-V2: worktree isolation, background and resumed sub-agents, the Bash sandbox's setup, WebFetch's fetching, MCP tools and the PDF and search threads load at first use", async () => {
    const loaded = (await modulesLoadedBy(SDK_ENTRY))
      .filter((url) => url.includes("/packages/"))
      .map((url) => url.slice(url.lastIndexOf("/packages/") + "/packages/".length));
    // Controls: the trace sees the tools, the Agent tool and the MCP connector whose execution loads them.
    for (const module of [
      "tools/dist/tools/bash.js",
      "tools/dist/tools/web-fetch.js",
      "orchestrator/dist/agent-tool.js",
      "mcp/dist/connect-mcp-servers.js",
    ])
      expect(loaded).toContain(module);
    const early = Object.entries(WORKSPACE_ON_FIRST_USE).flatMap(([use, modules]) =>
      loaded.filter((url) => modules.some((module) => url.startsWith(module))).map((url) => `${use}: ${url}`),
    );
    expect(early).toEqual([]);
  });
});

describe("R-V2: importing @forkloop/batch leaves the queue backend unloaded", () => {
  it("R-V2: BullMQ and ioredis load when a queued batch or queue worker starts, not at import (a local batch never uses them)", async () => {
    const entry = pathToFileURL(join(root, "packages/batch/dist/index.js")).href;
    const modules = await modulesLoadedBy(entry);
    // Control: the trace sees the queue modules themselves, which the package index exports.
    expect(modules.some((url) => url.endsWith("/packages/batch/dist/queue-worker.js"))).toBe(true);
    expect(packagesOf(modules).filter((name) => name === "bullmq" || name === "ioredis")).toEqual([]);
  });
});

/** Schemas the published entry exports that no session reads before its first request (R-V2). */
const SCHEMAS_BUILT_AT_FIRST_USE = [
  "streamJsonLineSchema",
  "systemInitLineSchema",
  "assistantLineSchema",
  "userLineSchema",
  "resultLineSchema",
  "resultSubtypeSchema",
  "subagentUsageSchema",
  "streamEventLineSchema",
  // Read only when FORKLOOP_MODELS names a file.
  "modelsFileSchema",
];

describe("R-V2: importing @forkloop/sdk builds no zod schema a session does not need first", () => {
  it("R-V2: the stream-json line schemas and the models file's are built at their first use (lazySchema), and validate as before", async () => {
    const script = `import { types } from "node:util";
const sdk = await import(${JSON.stringify(SDK_ENTRY)});
const names = ${JSON.stringify(SCHEMAS_BUILT_AT_FIRST_USE)};
const eager = names.filter((name) => !types.isProxy(sdk[name]));
const line = { type: "system", subtype: "status", status: null, session_id: "s", uuid: "u" };
process.stdout.write(JSON.stringify({ eager, status: sdk.streamJsonLineSchema.safeParse(line).success, bad: sdk.streamJsonLineSchema.safeParse({ type: "nope" }).success }));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
    const outcome = JSON.parse(stdout) as { eager: string[]; status: boolean; bad: boolean };
    expect(outcome.eager).toEqual([]);
    // Control: built at this first use, they accept a line and refuse a malformed one.
    expect(outcome).toMatchObject({ status: true, bad: false });
  });
});

describe("R-V2: the built-in tools' input schemas are built at a session's first request, not at import", () => {
  it("R-V2: every built-in tool's inputSchema is lazy (lazySchema) and converts to the same tool definition", async () => {
    const tools = pathToFileURL(join(root, "packages/tools", publishedEntry("packages/tools"))).href;
    const loopCore = pathToFileURL(
      join(root, "packages/loop-core", publishedEntry("packages/loop-core")),
    ).href;
    const script = `import { types } from "node:util";
const { createBuiltinTools } = await import(${JSON.stringify(tools)});
const { toolDefinitions } = await import(${JSON.stringify(loopCore)});
const list = createBuiltinTools({});
const eager = list.filter((tool) => !types.isProxy(tool.inputSchema)).map((tool) => tool.name);
const read = toolDefinitions(list).find((definition) => definition.name === "Read");
process.stdout.write(JSON.stringify({ eager, count: list.length, read: read.input_schema }));`;
    const { stdout } = await run(process.execPath, ["--input-type=module", "-e", script], { cwd: root });
    const outcome = JSON.parse(stdout) as { eager: string[]; count: number; read: Record<string, unknown> };
    expect(outcome.eager).toEqual([]);
    // Control: the tools are there, and the first request's definition of one is built from its schema.
    expect(outcome.count).toBeGreaterThan(8);
    expect(outcome.read).toMatchObject({ type: "object", required: ["file_path"] });
    expect(Object.keys(outcome.read.properties as object)).toContain("offset");
  });
});

describe("R-V2: a one-shot query loads no thread pool and no SDK file by file", () => {
  it("R-V2: a one-shot query() without a sub-agent runs to its result without loading piscina (the pool makes it at the first fork), the official SDK loaded as one bundled chunk", async () => {
    const sim = await startSimulator({
      brain: async () => ({ content: [{ type: "text", text: "one-shot done" }] }),
    });
    const home = mkdtempSync(join(tmpdir(), "forkloop-one-shot-"));
    try {
      const work = join(home, "work");
      mkdirSync(work, { recursive: true });
      const then = `const { query } = await import(${JSON.stringify(SDK_ENTRY)});
let text = "";
for await (const message of query({ prompt: "say done", options: { cwd: ${JSON.stringify(work)} } }))
  if (message.type === "result") text = message.result;
process.stdout.write(text);`;
      const env = {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        CLAUDE_CONFIG_DIR: join(home, ".claude"),
        FORKLOOP_HOME: join(home, ".forkloop"),
        ANTHROPIC_BASE_URL: sim.url,
        ANTHROPIC_API_KEY: "sk-one-shot",
      };
      const { files, stdout } = await filesLoadedWith(SDK_ENTRY, then, env);
      // Controls: the query ran to its result, and the trace sees what its first request loaded.
      expect(stdout).toBe("one-shot done");
      const loaded = packagesOf(builtModules(files));
      expect(loaded).toContain("@anthropic-ai/sdk");
      expect(loaded.filter((name) => name === "piscina" || name === "comlink")).toEqual([]);
      // The official SDK and its tracing dependency came in loop-core's bundle, not file by file.
      expect(
        packagesOf(files).filter((name) => name === "@anthropic-ai/sdk" || name === "@opentelemetry/api"),
      ).toEqual([]);
    } finally {
      await sim.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
