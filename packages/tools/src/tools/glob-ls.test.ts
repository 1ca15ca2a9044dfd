import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { GLOB_MAX_RESULTS, globTool } from "./glob.js";
import { lsTool } from "./ls.js";

const ws = useTempWorkspace();

function put(relativePath: string, mtimeSeconds = 1_000): void {
  const path = join(ws.root, relativePath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, "x\n");
  utimesSync(path, mtimeSeconds, mtimeSeconds);
}

beforeEach(() => {
  writeFileSync(join(ws.root, ".gitignore"), "dist/\n*.tmp\n");
  put("src/old.ts", 1_000);
  put("src/new.ts", 3_000);
  put("src/mid.tsx", 2_000);
  put("src/lib/util.ts", 1_500);
  put("dist/out.ts", 4_000);
  put("scratch.tmp", 4_000);
  put(".config/settings.ts", 500);
  put("README.md", 100);
});

describe("Glob", () => {
  it("R-T3: matches globs, newest first, respecting .gitignore", async () => {
    const text = resultText(await callTool(globTool, { pattern: "**/*.ts" }, ws.context()));
    const r = ws.root;
    expect(text).toBe(
      [`${r}/src/new.ts`, `${r}/src/lib/util.ts`, `${r}/src/old.ts`, `${r}/.config/settings.ts`].join("\n"),
    );
  });

  it("R-T3: searches under path, supports braces, reports no match", async () => {
    expect(resultText(await callTool(globTool, { pattern: "*.{ts,tsx}", path: "src" }, ws.context()))).toBe(
      `${ws.root}/src/new.ts\n${ws.root}/src/mid.tsx\n${ws.root}/src/old.ts`,
    );
    expect(resultText(await callTool(globTool, { pattern: "**/*.rs" }, ws.context()))).toBe("No files found");
  });

  it("R-T3: caps results with a note", async () => {
    for (let index = 0; index < GLOB_MAX_RESULTS + 5; index++) put(`many/f${index}.txt`);
    const text = resultText(await callTool(globTool, { pattern: "many/*.txt" }, ws.context()));
    expect(text.split("\n")).toHaveLength(GLOB_MAX_RESULTS + 1);
    expect(text).toMatch(/Results are truncated: showing 100 of 105/);
  });

  it("R-P1: refuses patterns and paths that leave the workspace", async () => {
    const dotdot = await callTool(globTool, { pattern: "../**/*" }, ws.context());
    expect(dotdot.isError).toBe(true);
    expect(resultText(dotdot)).toMatch(/may not contain "\.\." segments/);
    const outside = await callTool(globTool, { pattern: "*", path: "/etc" }, ws.context());
    expect(resultText(outside)).toMatch(/outside the workspace/);
    symlinkSync("/etc", join(ws.root, "etc-link"));
    expect(resultText(await callTool(globTool, { pattern: "etc-link/*" }, ws.context()))).toBe(
      "No files found",
    );
  });
});

describe("LS", () => {
  it("R-T3: lists a tree, skipping hidden, gitignored and ignore-glob entries", async () => {
    const text = resultText(await callTool(lsTool, { path: ".", ignore: ["*.md"] }, ws.context()));
    expect(text).toBe(
      [
        `- ${ws.root}/`,
        "  - src/",
        "    - lib/",
        "      - util.ts",
        "    - mid.tsx",
        "    - new.ts",
        "    - old.ts",
      ].join("\n"),
    );
  });

  it("R-T3: a missing directory or a path outside is an error", async () => {
    expect((await callTool(lsTool, { path: "nope" }, ws.context())).isError).toBe(true);
    expect(resultText(await callTool(lsTool, { path: "/" }, ws.context()))).toMatch(/outside the workspace/);
  });
});
