import { chmodSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { beforeEach, describe, expect, it } from "vitest";
import { findRipgrep, parseRipgrepJson, ripgrepArgs } from "../grep/ripgrep-backend.js";
import type { GrepBackend, GrepSearch } from "../grep/search.js";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { createGrepTool } from "./grep.js";

const ws = useTempWorkspace();
const grep = createGrepTool({ backend: "js" });

function put(relativePath: string, content: string | Buffer, mtimeSeconds?: number): void {
  const path = join(ws.root, relativePath);
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  if (mtimeSeconds !== undefined) utimesSync(path, mtimeSeconds, mtimeSeconds);
}

beforeEach(() => {
  put(".gitignore", "ignored/\n*.log\n");
  put("src/a.ts", "const foo = 1;\nconst bar = 2;\nfoo(bar);\n", 1_000);
  put("src/b.js", "function Foo() {}\n", 3_000);
  put("src/deep/c.ts", "line1\nline2 foo\nline3\nline4\nline5\nline6 foo\nline7\n", 2_000);
  put("ignored/x.ts", "foo\n");
  put("debug.log", "foo\n");
  put("bin.dat", Buffer.from("foo\0bar"));
  put(".hidden/h.ts", "foo\n", 500);
  put("sub/.gitignore", "*.md\n!keep.md\n");
  put("sub/drop.md", "foo\n");
  put("sub/keep.md", "foo\n", 400);
});

async function run(input: Record<string, unknown>): Promise<string> {
  return resultText(await callTool(grep, input, ws.context()));
}

describe("Grep (JavaScript backend)", () => {
  it("R-T3: files_with_matches lists files newest first, skipping gitignored and binary files", async () => {
    const text = await run({ pattern: "foo" });
    const r = ws.root;
    expect(text).toBe(
      ["Found 4 files", `${r}/src/deep/c.ts`, `${r}/src/a.ts`, `${r}/.hidden/h.ts`, `${r}/sub/keep.md`].join(
        "\n",
      ),
    );
  });

  it("R-T3: -i makes the search case-insensitive", async () => {
    expect(await run({ pattern: "foo", "-i": true, glob: "*.js" })).toBe(`Found 1 file\n${ws.root}/src/b.js`);
  });

  it("R-T3: content mode prints path:line:text with line numbers", async () => {
    expect(await run({ pattern: "foo", output_mode: "content", path: "src" })).toBe(
      [
        `${ws.root}/src/a.ts:1:const foo = 1;`,
        `${ws.root}/src/a.ts:3:foo(bar);`,
        `${ws.root}/src/deep/c.ts:2:line2 foo`,
        `${ws.root}/src/deep/c.ts:6:line6 foo`,
      ].join("\n"),
    );
  });

  it("R-T3: context lines use '-' and groups are separated by '--', like ripgrep", async () => {
    const text = await run({ pattern: "foo", output_mode: "content", path: "src/deep/c.ts", "-C": 1 });
    const p = `${ws.root}/src/deep/c.ts`;
    expect(text).toBe(
      [
        `${p}-1-line1`,
        `${p}:2:line2 foo`,
        `${p}-3-line3`,
        "--",
        `${p}-5-line5`,
        `${p}:6:line6 foo`,
        `${p}-7-line7`,
      ].join("\n"),
    );
    const after = await run({
      pattern: "line2",
      output_mode: "content",
      path: "src/deep/c.ts",
      "-A": 1,
      "-n": false,
    });
    expect(after).toBe([`${p}:line2 foo`, `${p}-line3`].join("\n"));
  });

  it("R-T3: count mode counts matching lines per file with a total", async () => {
    expect(await run({ pattern: "foo", output_mode: "count", type: "ts", path: "src" })).toBe(
      `${ws.root}/src/a.ts:2\n${ws.root}/src/deep/c.ts:2\n\nFound 4 total matching lines across 2 files.`,
    );
  });

  it("R-T3: head_limit keeps the first N entries with a note", async () => {
    const text = await run({ pattern: "line", output_mode: "content", head_limit: 2 });
    expect(text).toBe(
      `${ws.root}/src/deep/c.ts:1:line1\n${ws.root}/src/deep/c.ts:2:line2 foo\n\n(Showing the first 2 lines; head_limit cut the rest.)`,
    );
    expect(await run({ pattern: "foo", head_limit: 1 })).toBe(
      `Found 4 files (showing the first 1)\n${ws.root}/src/deep/c.ts`,
    );
  });

  it("R-X1: Claude Code's -o, context, offset and head_limit 0; the numbers must be whole", async () => {
    const c = `${ws.root}/src/deep/c.ts`;
    expect(
      await run({
        pattern: "line\\d",
        output_mode: "content",
        path: "src/deep/c.ts",
        "-o": true,
        head_limit: 2,
      }),
    ).toBe(`${c}:1:line1\n${c}:2:line2\n\n(Showing the first 2 lines; head_limit cut the rest.)`);
    expect(await run({ pattern: "o+", output_mode: "content", path: "src/a.ts", "-o": true })).toBe(
      [
        `${ws.root}/src/a.ts:1:o`,
        `${ws.root}/src/a.ts:1:oo`,
        `${ws.root}/src/a.ts:2:o`,
        `${ws.root}/src/a.ts:3:oo`,
      ].join("\n"),
    );
    // context (alias -C) wins over -B/-A when non-zero, as Claude Code reads them.
    expect(
      await run({ pattern: "line2", output_mode: "content", path: "src/deep/c.ts", context: 1, "-A": 3 }),
    ).toBe([`${c}-1-line1`, `${c}:2:line2 foo`, `${c}-3-line3`].join("\n"));
    expect(await run({ pattern: "line", output_mode: "content", path: "src/deep/c.ts", offset: 5 })).toBe(
      [`${c}:6:line6 foo`, `${c}:7:line7`].join("\n"),
    );
    expect(await run({ pattern: "foo", offset: 1, head_limit: 2 })).toBe(
      `Found 4 files (showing 2 from entry 2)\n${ws.root}/src/a.ts\n${ws.root}/.hidden/h.ts`,
    );
    expect(await run({ pattern: "foo", head_limit: 0 })).toMatch(/^Found 4 files\n/);
    expect(await run({ pattern: "foo", head_limit: 1.5 })).toMatch(/head_limit must be a whole number/);
    expect(await run({ pattern: "foo", output_mode: "content", "-C": 0.5 })).toMatch(
      /-C must be a whole number/,
    );
  });

  it("R-T3: multiline patterns span lines", async () => {
    expect(await run({ pattern: "foo = 1;.const bar", output_mode: "content", multiline: true })).toBe(
      `${ws.root}/src/a.ts:1:const foo = 1;\n${ws.root}/src/a.ts:2:const bar = 2;`,
    );
    expect(await run({ pattern: "foo = 1;.const bar" })).toBe("No files found");
  });

  it("R-T3: glob exclusions, type filters and (?i) work; bad input is a clear error", async () => {
    expect(await run({ pattern: "(?i)FOO", glob: "!*.ts", path: "src" })).toBe(
      `Found 1 file\n${ws.root}/src/b.js`,
    );
    expect(await run({ pattern: "foo", type: "cobol" })).toMatch(/Unknown file type "cobol"/);
    expect(await run({ pattern: "foo(" })).toMatch(/Invalid regular expression/);
    expect(await run({ pattern: "foo", path: "../" })).toMatch(/outside the workspace/);
    expect(await run({ pattern: "zzz", output_mode: "content" })).toBe("No matches found");
  });

  it("R-T3: the backend is injectable (the tool formats what any backend returns)", async () => {
    const seen: GrepSearch[] = [];
    const backend: GrepBackend = async (search) => {
      seen.push(search);
      return { ok: true, truncated: false, files: [{ path: "/x/y.ts", matchingLines: 3, lines: [] }] };
    };
    const text = resultText(
      await callTool(
        createGrepTool({ backend }),
        { pattern: "p", glob: "*.ts *.{js,jsx}", output_mode: "count" },
        ws.context(),
      ),
    );
    expect(text).toBe("/x/y.ts:3\n\nFound 3 total matching lines across 1 file.");
    expect(seen[0]?.globs).toEqual(["*.ts", "*.{js,jsx}"]);
  });
});

describe("Grep ripgrep backend: arguments and parsing (end to end in grep-parity.test.ts when rg is on PATH)", () => {
  it("R-T3: finds rg only when an executable named rg is on PATH", () => {
    expect(findRipgrep("/nonexistent-dir")).toBeUndefined();
    put("bin/rg", "#!/bin/sh\n");
    chmodSync(join(ws.root, "bin/rg"), 0o755);
    expect(findRipgrep(`/nonexistent-dir:${ws.root}/bin`)).toBe(`${ws.root}/bin/rg`);
  });

  it("R-T3: builds ripgrep arguments that mirror the JavaScript semantics", () => {
    const args = ripgrepArgs({
      pattern: "-foo",
      root: "/ws",
      workspaceRoots: ["/ws"],
      globs: ["*.ts"],
      typeGlobs: ["*.py"],
      caseInsensitive: true,
      multiline: true,
      mode: "content",
      contextBefore: 2,
      contextAfter: 0,
      maxLines: 10,
      maxFileBytes: 1000,
      signal: new AbortController().signal,
    });
    expect(args).toEqual([
      "--json",
      "--no-config",
      "--hidden",
      "--no-follow",
      "--no-require-git",
      "--crlf",
      "--ignore-case",
      "--multiline",
      "--multiline-dotall",
      "--before-context",
      "2",
      "--glob",
      "*.ts",
      "--glob",
      "!.git",
      "--type-add",
      "forkloop:*.py",
      "--type",
      "forkloop",
      "--max-filesize",
      "1000",
      "--regexp",
      "-foo",
      "--",
      "/ws",
    ]);
  });

  it("R-T3: parses ripgrep --json output (matches, context, multiline, byte paths, binary files dropped)", () => {
    const output = [
      '{"type":"begin","data":{"path":{"text":"/ws/a.ts"}}}',
      '{"type":"context","data":{"path":{"text":"/ws/a.ts"},"lines":{"text":"before\\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}',
      '{"type":"match","data":{"path":{"text":"/ws/a.ts"},"lines":{"text":"foo\\r\\nbar\\n"},"line_number":2,"absolute_offset":7,"submatches":[]}}',
      '{"type":"end","data":{"path":{"text":"/ws/a.ts"},"stats":{}}}',
      `{"type":"match","data":{"path":{"bytes":"${Buffer.from("/ws/b.ts").toString("base64")}"},"lines":{"text":"foo\\n"},"line_number":9,"submatches":[]}}`,
      '{"type":"begin","data":{"path":{"text":"/ws/bin.dat"}}}',
      '{"type":"match","data":{"path":{"text":"/ws/bin.dat"},"lines":{"text":"foo\\u0000\\n"},"line_number":1,"submatches":[]}}',
      '{"type":"end","data":{"path":{"text":"/ws/bin.dat"},"binary_offset":3,"stats":{}}}',
      '{"type":"summary","data":{}}',
    ].join("\n");
    expect(parseRipgrepJson(output, "content")).toEqual([
      {
        path: "/ws/a.ts",
        matchingLines: 2,
        lines: [
          { lineNumber: 1, text: "before", isMatch: false },
          { lineNumber: 2, text: "foo", isMatch: true },
          { lineNumber: 3, text: "bar", isMatch: true },
        ],
      },
      { path: "/ws/b.ts", matchingLines: 1, lines: [{ lineNumber: 9, text: "foo", isMatch: true }] },
    ]);
  });

  it("R-X1: with -o, a match event's submatches become each line's parts (byte offsets, multiline blocks)", () => {
    const output = [
      '{"type":"match","data":{"path":{"text":"/ws/a.ts"},"lines":{"text":"é foo fo\\nfoo\\n"},"line_number":4,"submatches":[{"match":{"text":"foo"},"start":3,"end":6},{"match":{"text":"fo\\nfoo"},"start":7,"end":13}]}}',
    ].join("\n");
    expect(parseRipgrepJson(output, "content", true)[0]?.lines).toEqual([
      { lineNumber: 4, text: "é foo fo", isMatch: true, parts: ["foo", "fo\nfoo"] },
      { lineNumber: 5, text: "foo", isMatch: true, parts: [] },
    ]);
  });
});
