import { appendFileSync, rmSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { type CaseGroup, describeThrough, type Through } from "./corpus.js";
import { PENDING } from "./pending.js";
import { CREDENTIAL_ENV, corpusBase, freshDir } from "./places.js";

/**
 * Declares the trust corpus groups as tests (R-S7 … R-S14): every surface of a group must
 * let 0 of its cases through, and the group's control — the same payloads with the protection off —
 * must see the effect of every case it names, so the assertions can fail. Surfaces run
 * concurrently. A case listed in pending.ts (another engineer's fix not yet on main) may get
 * through, and must: an entry no longer needed fails, so the list only shrinks.
 *
 * The model credentials are in this process's environment too, as they are in a CLI user's: a
 * process forkloop starts from `process.env` instead of the run's environment would carry them.
 */
Object.assign(process.env, CREDENTIAL_ENV);

/**
 * `TRUST_CORPUS_REPORT=FILE` appends one JSON line per surface as it ends (what got through), so a
 * long run's holes can be read before it finishes — for the holes file, not for the assertions.
 */
function report(title: string, label: string, through: readonly Through[]): void {
  const file = process.env.TRUST_CORPUS_REPORT;
  if (file) appendFileSync(file, `${JSON.stringify({ title, label, through })}\n`);
}

/** Up to this long per surface: each run has a watchdog well inside it (drive.ts). */
const SURFACE_TIMEOUT_MS = 300_000;

export function describeCorpus(groups: readonly CaseGroup[]): void {
  const base = corpusBase();
  afterAll(() => rmSync(base, { recursive: true, force: true }), 120_000);
  let runs = 0;
  const dirFor = (label: string) =>
    freshDir(base, `${++runs}-${label.replace(/[^A-Za-z0-9]+/g, "-").slice(0, 16)}`);

  it(`R-S7…R-S14: the corpus's ${groups.length} groups are a table of cases with unique ids`, () => {
    const ids = groups.flatMap((group) => group.cases.map((entry) => entry.id));
    expect(ids.filter((id, index) => ids.indexOf(id) !== index)).toEqual([]);
    console.log(`trust corpus: ${ids.length} cases in ${groups.length} groups`);
  });

  for (const group of groups) {
    describe(group.title, () => {
      const ids = new Set(group.cases.map((entry) => entry.id));
      const pendingHere = Object.keys(PENDING).filter((id) => ids.has(id));
      const pendingThrough = new Set<string>();
      for (const surface of group.surfaces) {
        it.concurrent(
          `0 get through: ${surface.label}`,
          async () => {
            const through = await surface.run(dirFor(surface.label));
            report(group.title, surface.label, through);
            for (const entry of through) if (PENDING[entry.id] !== undefined) pendingThrough.add(entry.id);
            expect(describeThrough(through.filter((entry) => PENDING[entry.id] === undefined))).toEqual([]);
          },
          SURFACE_TIMEOUT_MS,
        );
      }
      const control = group.control;
      if (control !== undefined) {
        it.concurrent(
          `control: ${control.label}`,
          async () => {
            const shown = await control.run(dirFor(control.label));
            report(group.title, `control: ${control.label}`, shown);
            const seen = new Set(shown.map((entry) => entry.id));
            expect(control.expect.filter((id) => !seen.has(id))).toEqual([]);
          },
          SURFACE_TIMEOUT_MS,
        );
      }
      if (pendingHere.length > 0)
        afterAll(() => {
          // A pending case that held everywhere is fixed: its entry must go.
          expect(pendingHere.filter((id) => !pendingThrough.has(id))).toEqual([]);
        });
    });
  }
}
