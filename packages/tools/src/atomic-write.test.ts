import { chmodSync, linkSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  createTempWorkspace,
  resultText,
  type TempWorkspace,
  useTempWorkspace,
} from "./testing/index.js";
import { editTool } from "./tools/edit.js";
import { readTool } from "./tools/read.js";
import { writeTool } from "./tools/write.js";

const ws = useTempWorkspace();
let outside: TempWorkspace;
beforeEach(() => {
  outside = createTempWorkspace("forkloop-outside-");
});
afterEach(() => outside.cleanup());

describe("R-S4: Write and Edit never modify an inode another path may reach", () => {
  it("R-S4: Write through a hard link to an outside file leaves the outside file as it was", async () => {
    const secret = join(outside.root, "secret.txt");
    writeFileSync(secret, "outside content\n");
    linkSync(secret, join(ws.root, "linked.txt"));
    const context = ws.context();
    await callTool(readTool, { file_path: "linked.txt" }, context);
    const result = await callTool(writeTool, { file_path: "linked.txt", content: "replaced\n" }, context);
    expect(result.isError, resultText(result)).toBeUndefined();
    expect(readFileSync(secret, "utf8")).toBe("outside content\n");
    expect(readFileSync(join(ws.root, "linked.txt"), "utf8")).toBe("replaced\n");
    expect(statSync(secret).nlink).toBe(1);
  });

  it("R-S4: Edit through a hard link leaves the outside file as it was", async () => {
    const secret = join(outside.root, "secret.txt");
    writeFileSync(secret, "alpha beta\n");
    linkSync(secret, join(ws.root, "linked.txt"));
    const context = ws.context();
    await callTool(readTool, { file_path: "linked.txt" }, context);
    const result = await callTool(
      editTool,
      { file_path: "linked.txt", old_string: "alpha", new_string: "gamma" },
      context,
    );
    expect(result.isError, resultText(result)).toBeUndefined();
    expect(readFileSync(secret, "utf8")).toBe("alpha beta\n");
    expect(readFileSync(join(ws.root, "linked.txt"), "utf8")).toBe("gamma beta\n");
  });

  it("R-S4: the write is a rename: the file keeps its mode and no temporary file is left", async () => {
    const path = join(ws.root, "script.sh");
    writeFileSync(path, "echo a\n");
    chmodSync(path, 0o750);
    const context = ws.context();
    await callTool(readTool, { file_path: "script.sh" }, context);
    await callTool(writeTool, { file_path: "script.sh", content: "echo b\n" }, context);
    expect(statSync(path).mode & 0o777).toBe(0o750);
    expect(readdirSync(ws.root)).toEqual(["script.sh"]);
  });
});
