import { readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { readTool } from "./read.js";
import { writeTool } from "./write.js";

const ws = useTempWorkspace();

describe("Write", () => {
  it("R-T3, R-X1: creates a new file and its parent directories, confirmed in Claude Code's words", async () => {
    const context = ws.context();
    const result = await callTool(writeTool, { file_path: "a/b/c.txt", content: "hi\n" }, context);
    expect(resultText(result)).toBe(
      `File created successfully at: ${join(ws.root, "a/b/c.txt")} (file state is current in your context — no need to Read it back)`,
    );
    expect(readFileSync(join(ws.root, "a/b/c.txt"), "utf8")).toBe("hi\n");
  });

  it("R-T3: refuses to overwrite a file that was not read first", async () => {
    writeFileSync(join(ws.root, "x.txt"), "original");
    const result = await callTool(writeTool, { file_path: "x.txt", content: "new" }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/has not been read yet\. Read .* first/);
    expect(readFileSync(join(ws.root, "x.txt"), "utf8")).toBe("original");
  });

  it("R-T3: refuses to overwrite a file changed on disk since it was read", async () => {
    const path = join(ws.root, "x.txt");
    writeFileSync(path, "original");
    const context = ws.context();
    await callTool(readTool, { file_path: "x.txt" }, context);
    writeFileSync(path, "changed by the user");
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    const result = await callTool(writeTool, { file_path: "x.txt", content: "new" }, context);
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/modified since it was read.*Read it again/);
    expect(readFileSync(path, "utf8")).toBe("changed by the user");
  });

  it("R-T3: overwrites after a Read, keeping CRLF line endings and the BOM", async () => {
    const path = join(ws.root, "w.txt");
    writeFileSync(path, "\ufeffold\r\nlines\r\n");
    const context = ws.context();
    await callTool(readTool, { file_path: path }, context);
    const result = await callTool(writeTool, { file_path: path, content: "new\ncontent\n" }, context);
    expect(resultText(result)).toMatch(/has been updated/);
    expect(readFileSync(path, "utf8")).toBe("\ufeffnew\r\ncontent\r\n");
    // The write counts as seen: a second write needs no extra Read.
    const again = await callTool(writeTool, { file_path: path, content: "third\n" }, context);
    expect(again.isError).toBeUndefined();
  });

  it("R-P1: refuses to write outside the workspace", async () => {
    const result = await callTool(writeTool, { file_path: "../escape.txt", content: "x" }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(/outside the workspace/);
  });
});
