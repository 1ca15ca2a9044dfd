import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { editTool } from "./edit.js";
import { readTool } from "./read.js";

const ws = useTempWorkspace();

async function readThenEdit(name: string, content: string | Buffer, input: Record<string, unknown>) {
  const path = join(ws.root, name);
  writeFileSync(path, content);
  const context = ws.context();
  await callTool(readTool, { file_path: name }, context);
  const result = await callTool(editTool, { file_path: name, ...input }, context);
  return { path, result, text: resultText(result), context };
}

describe("Edit", () => {
  it("R-T3, R-X1: replaces a unique exact string, confirmed in Claude Code's words", async () => {
    const { path, result, text } = await readThenEdit("a.ts", "const a = 1;\nconst b = 2;\n", {
      old_string: "b = 2",
      new_string: "b = 3",
    });
    expect(result.isError).toBeUndefined();
    expect(readFileSync(path, "utf8")).toBe("const a = 1;\nconst b = 3;\n");
    expect(text).toBe(
      `The file ${path} has been updated successfully. (file state is current in your context — no need to Read it back)`,
    );
  });

  it("R-T3: not found is an error", async () => {
    const { result, text } = await readThenEdit("a.ts", "abc\n", { old_string: "xyz", new_string: "q" });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/String to replace not found/);
  });

  it("R-T3: an ambiguous old_string is an error naming the count; replace_all replaces every one", async () => {
    const ambiguous = await readThenEdit("a.ts", "x x x\n", { old_string: "x", new_string: "y" });
    expect(ambiguous.result.isError).toBe(true);
    expect(ambiguous.text).toMatch(/Found 3 matches of the string to replace, but replace_all is false/);
    const all = await readThenEdit("b.ts", "x x x\n", {
      old_string: "x",
      new_string: "y",
      replace_all: true,
    });
    expect(readFileSync(all.path, "utf8")).toBe("y y y\n");
    expect(all.text).toMatch(/All 3 occurrences/);
  });

  it("R-T3: old_string equal to new_string is an error", async () => {
    const { result, text } = await readThenEdit("a.ts", "abc\n", { old_string: "abc", new_string: "abc" });
    expect(result.isError).toBe(true);
    expect(text).toMatch(/No changes to make/);
  });

  it("R-T3: keeps CRLF line endings when the model's strings use LF", async () => {
    const { path } = await readThenEdit("w.txt", "one\r\ntwo\r\nthree\r\n", {
      old_string: "one\ntwo",
      new_string: "uno\ndos\nmas",
    });
    expect(readFileSync(path, "utf8")).toBe("uno\r\ndos\r\nmas\r\nthree\r\n");
  });

  it("R-T3: keeps a UTF-8 BOM and a UTF-16LE encoding", async () => {
    const bom = await readThenEdit("bom.txt", "\ufeffhello world\n", {
      old_string: "world",
      new_string: "there",
    });
    expect(readFileSync(bom.path)).toEqual(Buffer.from("\ufeffhello there\n", "utf8"));
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo wörld\n", "utf16le")]);
    const u16 = await readThenEdit("u16.txt", utf16, { old_string: "wörld", new_string: "wörlds" });
    expect(readFileSync(u16.path)).toEqual(
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("héllo wörlds\n", "utf16le")]),
    );
  });

  it("R-T3: dollar patterns in new_string stay literal", async () => {
    const { path } = await readThenEdit("a.ts", "price\n", { old_string: "price", new_string: "$& $1 $$" });
    expect(readFileSync(path, "utf8")).toBe("$& $1 $$\n");
  });

  it("R-T3: refuses to edit a file changed on disk since it was read, as Write does (another agent's or the user's change is kept)", async () => {
    const path = join(ws.root, "shared.ts");
    writeFileSync(path, "export const a = 1;\nexport const b = 2;\n");
    const context = ws.context();
    await callTool(readTool, { file_path: "shared.ts" }, context);
    // Another writer (a second agent in the same tree, a linter) changes the file after the Read.
    writeFileSync(path, "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n");
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    const stale = await callTool(
      editTool,
      { file_path: "shared.ts", old_string: "export const b = 2;", new_string: "export const b = 20;" },
      context,
    );
    expect(stale.isError).toBe(true);
    expect(resultText(stale)).toMatch(/modified since it was read.*Read it again/);
    expect(readFileSync(path, "utf8")).toBe(
      "export const a = 1;\nexport const b = 2;\nexport const c = 3;\n",
    );
    // Control: once read again, the same edit applies over the other writer's change.
    await callTool(readTool, { file_path: "shared.ts" }, context);
    const fresh = await callTool(
      editTool,
      { file_path: "shared.ts", old_string: "export const b = 2;", new_string: "export const b = 20;" },
      context,
    );
    expect(fresh.isError).toBeFalsy();
    expect(readFileSync(path, "utf8")).toBe(
      "export const a = 1;\nexport const b = 20;\nexport const c = 3;\n",
    );
  });

  it("R-T3: refuses to edit a file that was not read", async () => {
    writeFileSync(join(ws.root, "a.ts"), "abc");
    const result = await callTool(
      editTool,
      { file_path: "a.ts", old_string: "abc", new_string: "d" },
      ws.context(),
    );
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/has not been read yet/);
  });

  it("R-T3: an empty old_string creates a new file; a missing file otherwise is an error", async () => {
    const context = ws.context();
    const created = await callTool(
      editTool,
      { file_path: "n/new.ts", old_string: "", new_string: "x\n" },
      context,
    );
    expect(resultText(created)).toMatch(/File created successfully/);
    expect(readFileSync(join(ws.root, "n/new.ts"), "utf8")).toBe("x\n");
    const missing = await callTool(
      editTool,
      { file_path: "gone.ts", old_string: "a", new_string: "b" },
      context,
    );
    expect(resultText(missing)).toMatch(/File does not exist/);
  });
});
