import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { editTool } from "./edit.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";

/**
 * R-R6, bytes kept: Edit and Write on real files in the encodings a user's project holds. Every
 * byte outside the edit must be the same afterwards; a file that cannot be decoded without loss
 * is edited byte for byte (ASCII only) or refused with the reason — never rewritten with U+FFFD.
 */
const ws = useTempWorkspace();

const bytes = (...parts: (string | number[])[]) =>
  Buffer.concat(
    parts.map((part) => (typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part))),
  );

async function readThen(
  tool: typeof editTool | typeof writeTool,
  name: string,
  content: Buffer,
  input: object,
) {
  const path = join(ws.root, name);
  writeFileSync(path, content);
  const context = ws.context();
  const read = await callTool(readTool, { file_path: name }, context);
  const result = await callTool(tool as typeof editTool, { file_path: name, ...input } as never, context);
  return { read: resultText(read), result, text: resultText(result), after: readFileSync(path) };
}

/** `before` with `from` replaced by `to` once, as bytes: what a byte-exact edit leaves. */
const replacedOnce = (before: Buffer, from: string, to: string) => {
  const at = before.indexOf(Buffer.from(from, "latin1"));
  return Buffer.concat([
    before.subarray(0, at),
    Buffer.from(to, "latin1"),
    before.subarray(at + from.length),
  ]);
};

describe("R-R6: Edit keeps every byte it did not touch", () => {
  const latin1 = bytes("// caf", [0xe9], " cr", [0xe8], "me\nconst x = 2;\n// na", [0xef], "ve\n");

  it("Latin-1 (not UTF-8): an ASCII edit changes only its bytes — no EF BF BD anywhere; Read says what it showed", async () => {
    const { read, result, after } = await readThen(editTool, "l1.ts", latin1, {
      old_string: "x = 2",
      new_string: "x = 3",
    });
    expect(result.isError).toBeUndefined();
    expect(after.equals(replacedOnce(latin1, "x = 2", "x = 3"))).toBe(true);
    expect(after.includes(Buffer.from([0xef, 0xbf, 0xbd]))).toBe(false);
    expect(read).toContain("// caf\uFFFD cr\uFFFDme");
    expect(read).toContain(
      "This file is not valid UTF-8 (byte 0xE9 at offset 6, line 1): likely Latin-1, Shift-JIS or another legacy encoding; bytes that do not decode are shown as \uFFFD.",
    );
  });

  it("Latin-1: a non-ASCII old_string or new_string is refused with the reason and the fix; the file is unchanged", async () => {
    for (const input of [
      { old_string: "x = 2", new_string: "x = 'é'" },
      { old_string: "caf\uFFFD", new_string: "cafe" },
    ]) {
      const { result, text, after } = await readThen(editTool, "l1.ts", latin1, input);
      expect(result.isError).toBe(true);
      expect(text).toMatch(
        /is not valid UTF-8 \(byte 0xE9 at offset 6, line 1\).*must be plain ASCII; convert the file to UTF-8 first/,
      );
      expect(after.equals(latin1)).toBe(true);
    }
  });

  // "ソ" in Shift-JIS is 83 5C: its second byte is an ASCII backslash.
  const shiftJis = bytes('const s = "', [0x83, 0x5c], '";\nconst t = 1;\n');

  it("Shift-JIS: an edit elsewhere keeps every byte; a match that could be half of a character is refused", async () => {
    const kept = await readThen(editTool, "sj.ts", shiftJis, { old_string: "t = 1", new_string: "t = 2" });
    expect(kept.result.isError).toBeUndefined();
    expect(kept.after.equals(replacedOnce(shiftJis, "t = 1", "t = 2"))).toBe(true);

    const half = await readThen(editTool, "sj.ts", shiftJis, { old_string: '\\";', new_string: '";' });
    expect(half.result.isError).toBe(true);
    expect(half.text).toContain(
      "follows a non-ASCII byte: in a multi-byte encoding (Shift-JIS, GBK) it could be the second half of a character",
    );
    expect(half.after.equals(shiftJis)).toBe(true);
  });

  it.each([
    ["UTF-16LE", [0xff, 0xfe], "utf16le"],
    ["UTF-16BE", [0xfe, 0xff], "utf16be"],
  ] as const)(
    "%s with BOM and CRLF: stays %s with its BOM and line endings, non-ASCII included",
    async (_name, bom, encoding) => {
      const encode = (text: string) => {
        const body = Buffer.from(text, "utf16le");
        return Buffer.concat([Buffer.from(bom), encoding === "utf16be" ? body.swap16() : body]);
      };
      const before = encode("línea uno\r\nlínea dos\r\n");
      const { result, after } = await readThen(editTool, "u16.txt", before, {
        old_string: "uno\nlínea",
        new_string: "一\nline",
      });
      expect(result.isError).toBeUndefined();
      expect(after.equals(encode("línea 一\r\nline dos\r\n"))).toBe(true);
    },
  );

  it("UTF-8 with BOM: the BOM stays, and a second one inside the text is content, kept", async () => {
    const before = bytes([0xef, 0xbb, 0xbf], "a = 1\n", [0xef, 0xbb, 0xbf], "b = 2\n");
    const { after } = await readThen(editTool, "bom.txt", before, {
      old_string: "a = 1",
      new_string: "a = 9",
    });
    expect(after.equals(replacedOnce(before, "a = 1", "a = 9"))).toBe(true);
  });

  it("mixed line endings: each line keeps its own; a string across a CRLF break matches in an LF-dominant file", async () => {
    const before = Buffer.from("one\r\ntwo\nthree\r\nfour\nfive\n");
    const single = await readThen(editTool, "mixed.txt", before, { old_string: "two", new_string: "2" });
    expect(single.after.toString()).toBe("one\r\n2\nthree\r\nfour\nfive\n");
    const across = await readThen(editTool, "mixed.txt", before, {
      old_string: "three\nfour",
      new_string: "3\n4",
    });
    expect(across.after.toString()).toBe("one\r\ntwo\n3\r\n4\nfive\n");
  });

  it("a file with a NUL byte is refused as binary and left as it was", async () => {
    const before = bytes("head\n", [0x00, 0x01], "x = 2\n");
    const { read, result, after } = await readThen(editTool, "nul.txt", before, {
      old_string: "x = 2",
      new_string: "x = 3",
    });
    expect(read).toContain("binary (it contains NUL bytes)");
    expect(result.isError).toBe(true);
    expect(after.equals(before)).toBe(true);
  });
});

describe("R-R6: Write keeps an existing file's encoding", () => {
  it("UTF-16LE with BOM and UTF-8 with BOM stay so; CRLF stays", async () => {
    const u16 = await readThen(
      writeTool,
      "w16.txt",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("a\r\n", "utf16le")]),
      {
        content: "ñ\nb\n",
      },
    );
    expect(
      u16.after.equals(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("ñ\r\nb\r\n", "utf16le")])),
    ).toBe(true);
    const bom = await readThen(writeTool, "w8.txt", bytes([0xef, 0xbb, 0xbf], "a\n"), { content: "é\n" });
    expect(bom.after.equals(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("é\n")]))).toBe(true);
  });

  it("into a file that is not UTF-8: ASCII is written; non-ASCII is refused (it would change the encoding)", async () => {
    const latin1 = bytes("caf", [0xe9], "\n");
    const ascii = await readThen(writeTool, "w1.txt", latin1, { content: "plain\n" });
    expect(ascii.after.toString()).toBe("plain\n");
    const accented = await readThen(writeTool, "w1.txt", latin1, { content: "café\n" });
    expect(accented.result.isError).toBe(true);
    expect(accented.text).toMatch(
      /not valid UTF-8 .* Write would store the new content as UTF-8, changing the file's encoding/,
    );
    expect(accented.after.equals(latin1)).toBe(true);
  });
});
