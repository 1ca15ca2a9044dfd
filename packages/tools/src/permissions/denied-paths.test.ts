import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Tool } from "@forkloop/loop-core";
import { beforeEach, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../builtin-tools.js";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";

const ws = useTempWorkspace();

beforeEach(() => {
  mkdirSync(join(ws.root, "src"));
  mkdirSync(join(ws.root, "secrets"));
  writeFileSync(join(ws.root, ".env"), "SECRET=1\n");
  writeFileSync(join(ws.root, "secrets", "key.txt"), "SECRET key\n");
  writeFileSync(join(ws.root, "src", "a.ts"), "const SECRET = process.env.SECRET;\n");
});

function tool(tools: readonly Tool[], name: string): Tool {
  const found = tools.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no ${name}`);
  return found;
}

describe("R-P1: read-deny rules also filter directory-wide tools", () => {
  const denyRules = ["Read(./.env)", "Read(secrets/**)"];

  it("R-P1: Grep leaves out denied files (and finds them without the rules)", async () => {
    const open = await callTool(tool(createBuiltinTools(), "Grep"), { pattern: "SECRET" }, ws.context());
    expect(resultText(open)).toMatch(/Found 3 files/);
    const guarded = await callTool(
      tool(createBuiltinTools({ denyRules }), "Grep"),
      { pattern: "SECRET" },
      ws.context(),
    );
    expect(resultText(guarded)).toBe(`Found 1 file\n${join(ws.root, "src", "a.ts")}`);
  });

  it("R-P1: Glob and LS leave out denied files", async () => {
    const tools = createBuiltinTools({ denyRules });
    const glob = resultText(await callTool(tool(tools, "Glob"), { pattern: "**/*" }, ws.context()));
    expect(glob).toBe(join(ws.root, "src", "a.ts"));
    const ls = resultText(await callTool(tool(tools, "LS"), { path: "." }, ws.context()));
    // The denied directory's name shows (as with `secrets/**` in git), none of its files.
    expect(ls).toBe([`- ${ws.root}/`, "  - secrets/", "  - src/", "    - a.ts"].join("\n"));
  });
});
