/**
 * The trust corpus as a whole (R-S7 … R-S14): every case id of both parts, counted and
 * unique across the part files, and every pending entry naming a case that exists. Nothing runs
 * here; the part files (git-and-files, sandbox-and-paths, patterns-modes-views) run the cases.
 */
import { describe, expect, it } from "vitest";
import type { CaseGroup } from "./corpus.js";
import { groups as git } from "./git-execution.cases.js";
import { groups as modes } from "./modes.cases.js";
import { groups as patterns } from "./patterns.cases.js";
import { PENDING } from "./pending.js";
import { groups as files } from "./project-files.cases.js";
import { groups as protectedPaths } from "./protected-paths.cases.js";
import { groups as races } from "./races.cases.js";
import { groups as resumedMode } from "./resumed-mode.cases.js";
import { groups as sandbox } from "./sandbox.cases.js";
import { groups as schemaPatterns } from "./schema-patterns.cases.js";
import { groups as secondSession } from "./second-session.cases.js";
import { groups as secrets } from "./secrets-and-modes.cases.js";
import { groups as settings } from "./settings.cases.js";
import { groups as state } from "./shipped-state.cases.js";
import { groups as terminal } from "./terminal.cases.js";

const CLASSES: Readonly<Record<string, readonly CaseGroup[]>> = {
  "forkloop's own git (R-S7)": git,
  "project files read like Read (R-S8)": files,
  "state shipped in a checkout (R-S11)": state,
  "secrets and file modes (R-S13)": secrets,
  "the sandbox (R-S9)": sandbox,
  "protected directories by real path (R-S10)": protectedPaths,
  "settings a repository ships (R-S11)": settings,
  "patterns in bounded time, signals (R-S12)": patterns,
  "JSON Schema patterns against the model's answers (R-S12)": schemaPatterns,
  "modes changed during a turn (R-S14)": modes,
  "modes changed before a sub-agent is resumed (R-S14)": resumedMode,
  "terminal escaping (R-S14)": terminal,
  "symlink races between check and write (R-S4, R-S10)": races,
  "a second session while a sandboxed command runs (R-S9)": secondSession,
};

/** The Done when: at least this many cases over its classes. */
const REQUIRED = 150;

describe("R-S7…R-S14: the trust corpus as a whole", () => {
  const ids = Object.values(CLASSES).flatMap((groups) =>
    groups.flatMap((group) => group.cases.map((entry) => entry.id)),
  );

  it(`R-S7…R-S14: at least ${REQUIRED} cases with unique ids across both parts (the total is printed)`, () => {
    const lines = Object.entries(CLASSES).map(
      ([name, groups]) => `  ${name}: ${groups.reduce((sum, group) => sum + group.cases.length, 0)}`,
    );
    console.log(`trust corpus: ${ids.length} cases in total\n${lines.join("\n")}`);
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    expect(ids.length).toBeGreaterThanOrEqual(REQUIRED);
  });

  it("R-S7…R-S14: every pending entry names a case of the corpus", () => {
    expect(Object.keys(PENDING).filter((id) => !ids.includes(id))).toEqual([]);
  });
});
