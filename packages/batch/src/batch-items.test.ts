import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadItems, renderTemplate, validateTemplate } from "./batch-items.js";

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-items-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("batch items", () => {
  it("--files: sorted, .gitignore respected, stable ids, {{file}} rendered", async () => {
    await mkdir(join(dir, "src", "gen"), { recursive: true });
    await writeFile(join(dir, ".gitignore"), "src/gen/\n");
    await writeFile(join(dir, "src", "b.ts"), "");
    await writeFile(join(dir, "src", "a.ts"), "");
    await writeFile(join(dir, "src", "gen", "c.ts"), "");
    const source = { kind: "files", pattern: "src/**/*.ts", cwd: dir } as const;
    const items = await loadItems(source, "Summarize {{file}}");
    expect(items.map((item) => [item.label, item.prompt])).toEqual([
      ["src/a.ts", "Summarize src/a.ts"],
      ["src/b.ts", "Summarize src/b.ts"],
    ]);
    expect((await loadItems(source, "Summarize {{file}}")).map((item) => item.id)).toEqual(
      items.map((item) => item.id),
    );
  });

  it("--items: one JSON value per line; {{item}} and {{item.key}}", async () => {
    const path = join(dir, "items.jsonl");
    await writeFile(path, '"plain"\n\n{"name":"x","n":2}\n');
    const items = await loadItems({ kind: "items", path }, "Do {{item}} / {{item.name}}");
    expect(items.map((item) => [item.label, item.prompt])).toEqual([
      [`${path}:1`, "Do plain / "],
      [`${path}:3`, 'Do {"name":"x","n":2} / x'],
    ]);
  });

  it("bad input names the problem and the fix", async () => {
    const files = { kind: "files", pattern: "*.ts", cwd: dir } as const;
    expect(() => validateTemplate("Summarize", files)).toThrow(/must contain \{\{file\}\}/);
    expect(() => validateTemplate("Do {{item}}", files)).toThrow(/use \{\{file\}\} instead/);
    expect(() => validateTemplate("Do {{file}} {{fiel}}", files)).toThrow(/unknown placeholder \{\{fiel\}\}/);
    await expect(loadItems(files, "{{file}}")).rejects.toThrow(/matched no file/);
    const path = join(dir, "bad.jsonl");
    await writeFile(path, "{oops\n");
    await expect(loadItems({ kind: "items", path }, "{{item}}")).rejects.toThrow(/bad.jsonl:1 is not JSON/);
    expect(renderTemplate("{{ item.a.b }}", { item: { a: { b: 7 } } })).toBe("7");
  });
});
