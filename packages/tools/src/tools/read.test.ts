import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { READ_ALLOW_LARGE_MAX_CHARS, readTool } from "./read.js";

const ws = useTempWorkspace();

describe("Read", () => {
  it("R-T3, R-X1: numbers lines as Claude Code's Read (a file's final newline ends in an empty line), and records the read", async () => {
    writeFileSync(join(ws.root, "a.txt"), "alpha\nbeta\n");
    const context = ws.context();
    const result = await callTool(readTool, { file_path: "a.txt" }, context);
    expect(result.isError).toBeUndefined();
    expect(resultText(result)).toBe("1\talpha\n2\tbeta\n3\t");
    expect(result.output).toEqual({
      type: "text",
      file: {
        filePath: join(ws.root, "a.txt"),
        content: "alpha\nbeta\n",
        numLines: 3,
        startLine: 1,
        totalLines: 3,
      },
    });
    expect(context.agentState.readFiles.has(join(ws.root, "a.txt"))).toBe(true);
  });

  it("R-T3: offset and limit page through the file with a note when output was cut", async () => {
    writeFileSync(join(ws.root, "n.txt"), Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n"));
    const context = ws.context();
    const text = resultText(await callTool(readTool, { file_path: "n.txt", offset: 3, limit: 2 }, context));
    expect(text).toBe("3\tline 3\n4\tline 4\n\n(Showing lines 3-4 of 10. Use offset=5 to read more.)");
    const paged = await callTool(readTool, { file_path: "n.txt", offset: 3, limit: 2 }, context);
    expect(paged.output).toMatchObject({
      file: { content: "line 3\nline 4", numLines: 2, startLine: 3, totalLines: 10 },
    });
  });

  it("R-T3: reads at most 2000 lines by default", async () => {
    writeFileSync(join(ws.root, "big.txt"), Array.from({ length: 2500 }, (_, i) => `l${i + 1}`).join("\n"));
    const text = resultText(await callTool(readTool, { file_path: "big.txt" }, ws.context()));
    expect(text).toContain("\n2000\tl2000");
    expect(text).not.toContain("l2001");
    expect(text).toContain("Showing lines 1-2000 of 2500. Use offset=2001 to read more.");
  });

  it("R-T3: truncates lines longer than 2000 characters with a note", async () => {
    writeFileSync(join(ws.root, "long.txt"), `${"x".repeat(2500)}\nshort\n`);
    const text = resultText(await callTool(readTool, { file_path: "long.txt" }, ws.context()));
    expect(text).toContain(`1\t${"x".repeat(2000)}… [line truncated, 500 more characters]`);
    expect(text).toContain("1 line(s) longer than 2000 characters were truncated.");
  });

  it("R-T3, R-X1: allow_large (Claude Code's input) lifts the line limit and the line truncation, up to a character cap", async () => {
    writeFileSync(
      join(ws.root, "large.txt"),
      [...Array.from({ length: 2500 }, (_, i) => `l${i + 1}`), "y".repeat(2500)].join("\n"),
    );
    const text = resultText(
      await callTool(readTool, { file_path: "large.txt", allow_large: true }, ws.context()),
    );
    expect(text).toContain("\n2500\tl2500\n");
    expect(text).toContain(`2501\t${"y".repeat(2500)}`);
    expect(text).not.toContain("truncated");
    expect(text).not.toContain("Showing lines");
    // A limit still pages; over the cap the call is refused with the way to read in parts.
    const paged = resultText(
      await callTool(
        readTool,
        { file_path: "large.txt", allow_large: true, offset: 2, limit: 1 },
        ws.context(),
      ),
    );
    expect(paged).toBe("2\tl2\n\n(Showing lines 2-2 of 2501. Use offset=3 to read more.)");
    writeFileSync(join(ws.root, "huge.txt"), `${"z".repeat(READ_ALLOW_LARGE_MAX_CHARS)}\n`);
    const huge = await callTool(readTool, { file_path: "huge.txt", allow_large: true }, ws.context());
    expect(huge.isError).toBe(true);
    expect(resultText(huge)).toContain("Read it in parts with offset and limit");
  });

  it("R-T3: returns an image as an image block (magic bytes, not the name)", async () => {
    const png = Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      Buffer.alloc(16),
    ]);
    writeFileSync(join(ws.root, "shot.dat"), png);
    const result = await callTool(readTool, { file_path: "shot.dat" }, ws.context());
    expect(result.content).toEqual([
      { type: "text", text: `Image ${join(ws.root, "shot.dat")} (image/png, 24 bytes):` },
      { type: "image", source: { type: "base64", media_type: "image/png", data: png.toString("base64") } },
    ]);
  });

  it("R-T3: refuses binary files with a clear message", async () => {
    writeFileSync(join(ws.root, "img.png"), Buffer.from([0x89, 0x50, 0x4e, 0x00, 0x00, 0x01]));
    const result = await callTool(readTool, { file_path: "img.png" }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/binary \.png file; this tool only reads text/);
  });

  it("R-T3: notes an empty file and an offset past the end", async () => {
    writeFileSync(join(ws.root, "empty.txt"), "");
    writeFileSync(join(ws.root, "two.txt"), "a\nb\n");
    const context = ws.context();
    expect(resultText(await callTool(readTool, { file_path: "empty.txt" }, context))).toMatch(
      /contents are empty/,
    );
    expect(resultText(await callTool(readTool, { file_path: "two.txt", offset: 9 }, context))).toMatch(
      /shorter than the provided offset \(9\)\. The file has 3 lines/,
    );
  });

  it("R-T3: strips CRLF, decodes a UTF-16 file with BOM", async () => {
    writeFileSync(join(ws.root, "crlf.txt"), "one\r\ntwo\r\n");
    writeFileSync(
      join(ws.root, "u16.txt"),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo\n", "utf16le")]),
    );
    const context = ws.context();
    expect(resultText(await callTool(readTool, { file_path: "crlf.txt" }, context))).toBe(
      "1\tone\n2\ttwo\n3\t",
    );
    expect(resultText(await callTool(readTool, { file_path: "u16.txt" }, context))).toBe("1\théllo\n2\t");
  });

  it("R-T3: missing files, directories and paths outside the workspace are errors", async () => {
    mkdirSync(join(ws.root, "dir"));
    const context = ws.context();
    expect(resultText(await callTool(readTool, { file_path: "nope.txt" }, context))).toMatch(
      `File does not exist. Note: your current working directory is ${ws.root}.`,
    );
    expect(resultText(await callTool(readTool, { file_path: "dir" }, context))).toMatch(
      /is a directory; use the LS/,
    );
    const outside = await callTool(readTool, { file_path: "/etc/hostname" }, context);
    expect(outside.isError).toBe(true);
    expect(resultText(outside)).toMatch(/outside the workspace/);
  });

  it("R-T1: invalid input is rejected by the schema, never reaching call", async () => {
    const result = await callTool(readTool, { file_path: "a", offset: -1 }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/InputValidationError/);
  });

  it("R-T1: backfills a relative path to an absolute one", () => {
    const context = ws.context();
    expect(readTool.backfillInput?.({ file_path: "x/y.ts" }, context)).toEqual({
      file_path: join(ws.root, "x/y.ts"),
    });
  });
});
