import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { describeSkipped, loadItems, renderTemplate, validateTemplate } from "./batch-items.js";

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
    const { items } = await loadItems(source, "Summarize {{file}}");
    expect(items.map((item) => [item.label, item.prompt])).toEqual([
      ["src/a.ts", "Summarize src/a.ts"],
      ["src/b.ts", "Summarize src/b.ts"],
    ]);
    expect((await loadItems(source, "Summarize {{file}}")).items.map((item) => item.id)).toEqual(
      items.map((item) => item.id),
    );
  });

  it("--items: one JSON value per line; {{item}} and {{item.key}}; an `id` field labels the item", async () => {
    const path = join(dir, "items.jsonl");
    await writeFile(path, '{"name":"p"}\n\n{"name":"x","n":2,"id":"second"}\n');
    const { items } = await loadItems({ kind: "items", path }, "Do {{item}} / {{item.name}}");
    expect(items.map((item) => [item.label, item.prompt])).toEqual([
      [`${path}:1`, 'Do {"name":"p"} / p'],
      ["second", 'Do {"name":"x","n":2,"id":"second"} / x'],
    ]);
  });

  it("a {{item.key}} that an item lacks is exit 2 before the run, naming the item and the key", async () => {
    const path = join(dir, "items.jsonl");
    await writeFile(path, '{"name":"a"}\n"plain"\n{"other":1}\n');
    await expect(loadItems({ kind: "items", path }, "Do {{item.name}}")).rejects.toThrow(
      `--prompt uses {{item.name}}, but ${path}:2 has no "name"; ${path}:3 has no "name". Give every line the key, or change --prompt.`,
    );
  });

  it("binary and unreadable --files matches are skipped and listed", async () => {
    await writeFile(join(dir, "a.txt"), "text\n");
    await writeFile(join(dir, "b.txt"), Buffer.from([0x89, 0x50, 0x00, 0x01]));
    await symlink("/proc/self/mem", join(dir, "c.txt"));
    const { items, skipped } = await loadItems({ kind: "files", pattern: "*.txt", cwd: dir }, "{{file}}");
    expect(items.map((item) => item.label)).toEqual(["a.txt"]);
    expect(describeSkipped(skipped)).toBe("skipped 1 binary file (b.txt) and 1 unreadable file (c.txt: EIO)");
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
