import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createFileSessionMemoryStore, shouldUpdateSessionMemory } from "./session-memory.js";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe("session memory", () => {
  it("R-C5: one notes file per session, with how far the notes reach", async () => {
    const dir = await mkdtemp(join(tmpdir(), "forkloop-notes-"));
    dirs.push(dir);
    const store = createFileSessionMemoryStore({ dir, sessionId: "session-1" });
    expect(await store.load()).toBeNull();
    await store.save({ text: "## Goal and constraints\nship it", coveredUuid: "m42", tokensAtUpdate: 5_000 });
    expect(await store.load()).toEqual({
      text: "## Goal and constraints\nship it",
      coveredUuid: "m42",
      tokensAtUpdate: 5_000,
    });
    expect(await readFile(join(dir, "session-1.md"), "utf8")).toContain("ship it");
    expect(await createFileSessionMemoryStore({ dir, sessionId: "session-2" }).load()).toBeNull();
  });

  it("rejects a session id that is not a plain file name", () => {
    expect(() => createFileSessionMemoryStore({ dir: tmpdir(), sessionId: "../escape" })).toThrow(
      /not a safe file name/,
    );
  });

  it.each([
    ["too early in the session", 1_000, null, false],
    ["first notes once past the interval", 2_500, null, true],
    ["not enough growth since the last notes", 4_000, 3_000, false],
    ["enough growth since the last notes", 5_000, 3_000, true],
  ] as const)("R-C5: %s", (_name, tokens, last, expected) => {
    const notes = last === null ? null : { text: "n", coveredUuid: "u", tokensAtUpdate: last };
    expect(shouldUpdateSessionMemory({ tokens, notes, minTokens: 2_000, intervalTokens: 2_000 })).toBe(
      expected,
    );
  });
});
