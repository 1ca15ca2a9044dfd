import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import type { Brain, Simulator } from "@forkloop/sim";
import { startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-R6's neighbours through the whole CLI: a `forkloop batch` whose items (worker threads) Read
 * and then Edit or Write files in the encodings a user's project holds — UTF-16LE and UTF-16BE
 * with a BOM and CRLF, Shift-JIS with a character whose second byte is a backslash, Latin-1,
 * mixed line endings. Afterwards every file holds exactly the bytes the edit asked for and every
 * other byte as it was (before R-R6, Edit rewrote each invalid UTF-8 byte anywhere in the file as
 * EF BF BD). packages/tools' encodings.test.ts checks the tools one by one; this is the batch path.
 * The simulator runs in this process with a brain that scripts each item's two tool calls.
 */

const utf16 = (text: string, order: "le" | "be") => {
  const body = Buffer.from(text, "utf16le");
  return order === "le"
    ? Buffer.concat([Buffer.from([0xff, 0xfe]), body])
    : Buffer.concat([Buffer.from([0xfe, 0xff]), body.swap16()]);
};
const latin1 = (...parts: (string | number[])[]) =>
  Buffer.concat(
    parts.map((part) => (typeof part === "string" ? Buffer.from(part, "latin1") : Buffer.from(part))),
  );
/** Shift-JIS `ソ` is 83 5C: its second byte is a backslash in ASCII. */
const shiftJis = latin1('const s = "', [0x83, 0x5c], '";\nconst t = 1;\n');

interface Case {
  readonly before: Buffer;
  /** The item's second tool call. */
  readonly call: { name: "Edit" | "Write"; input: Record<string, string> };
  readonly after: Buffer;
}

const CASES: Record<string, Case> = {
  "u16le.txt": {
    before: utf16("línea uno\r\nlínea dos\r\n", "le"),
    call: { name: "Edit", input: { old_string: "uno\nlínea", new_string: "一\nline" } },
    after: utf16("línea 一\r\nline dos\r\n", "le"),
  },
  "u16be.txt": {
    before: utf16("línea uno\r\nlínea dos\r\n", "be"),
    call: { name: "Edit", input: { old_string: "dos", new_string: "dós" } },
    after: utf16("línea uno\r\nlínea dós\r\n", "be"),
  },
  "w16be.txt": {
    before: utf16("a\r\n", "be"),
    call: { name: "Write", input: { content: "ñ\nb\n" } },
    after: utf16("ñ\r\nb\r\n", "be"),
  },
  "sjis.ts": {
    before: shiftJis,
    call: { name: "Edit", input: { old_string: "t = 1", new_string: "t = 2" } },
    after: latin1('const s = "', [0x83, 0x5c], '";\nconst t = 2;\n'),
  },
  "latin1.txt": {
    before: latin1("caf", [0xe9], " = 1\nna", [0xef], "ve = 2\n"),
    call: { name: "Edit", input: { old_string: "= 2", new_string: "= 3" } },
    after: latin1("caf", [0xe9], " = 1\nna", [0xef], "ve = 3\n"),
  },
  "mixed.txt": {
    before: Buffer.from("one\r\ntwo\nthree\r\nfour\nfive\n"),
    call: { name: "Edit", input: { old_string: "three\nfour", new_string: "3\n4" } },
    after: Buffer.from("one\r\ntwo\n3\r\n4\nfive\n"),
  },
};

/** Each item: Read its file, then its tool call, then done. */
const brain: Brain = (request) => {
  const conversation = JSON.stringify(request.body.messages);
  const name = Object.keys(CASES).find((file) => conversation.includes(`Change ${file}`)) ?? "";
  const path = join(dir, name);
  if (request.turnIndex === 0)
    return { content: [{ type: "tool_use", name: "Read", input: { file_path: path } }] };
  if (request.turnIndex === 1) {
    const { call } = CASES[name]!;
    return { content: [{ type: "tool_use", name: call.name, input: { file_path: path, ...call.input } }] };
  }
  return { content: [{ type: "text", text: `changed ${name} (scripted by the simulator)` }] };
};

let dir: string;
let sim: Simulator;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-chaos-encodings-"));
  sim = await startSimulator({ brain });
});
afterAll(async () => {
  await sim?.close();
  await rm(dir, { recursive: true, force: true });
});

describe("R-R6 chaos: a batch edits files in other encodings and keeps every byte it did not touch", () => {
  it("UTF-16LE/BE with BOM and CRLF, Shift-JIS, Latin-1 and mixed line endings: each file is exactly its edit, in its own encoding", async () => {
    for (const [name, { before }] of Object.entries(CASES)) await writeFile(join(dir, name), before);
    await writeFile(
      join(dir, "items.jsonl"),
      Object.keys(CASES)
        .map((file) => JSON.stringify({ id: file, file }))
        .join("\n"),
    );
    const batch = await runCliInProcess(
      [
        "batch",
        "--items",
        "items.jsonl",
        "--prompt",
        "Change {{item.file}}",
        "--permission-mode",
        "acceptEdits",
        // The scripted calls name the project's own paths: the items edit in place (R-B2 apart).
        "--no-isolate",
      ],
      { cwd: dir, env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url } },
    );
    expect(batch.code, batch.stderr).toBe(0);
    const count = Object.keys(CASES).length;
    expect(batch.stdout).toContain(`${count} items: ${count} succeeded, 0 failed`);
    for (const [name, { after }] of Object.entries(CASES)) {
      const bytes = await readFile(join(dir, name));
      expect(bytes.toString("hex"), name).toBe(after.toString("hex"));
    }
  }, 120_000);
});
