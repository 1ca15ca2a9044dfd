import { loadIntactTranscript, type TranscriptDamageData } from "@forkloop/orchestrator";

/**
 * A fork's or a batch item's transcript for the page: a damaged one (R-R4) gives its intact
 * part and says what is left out — one bad side file must not cost a session's or a 10,000-item
 * batch's whole report.
 */
export async function readShownTranscript(path: string) {
  const loaded = await loadIntactTranscript(path);
  return {
    ...loaded,
    problem: loaded.damage === undefined ? undefined : damageProblem(loaded.damage),
  };
}

function damageProblem(damage: TranscriptDamageData): string {
  return `the transcript is damaged at byte ${damage.offset} of ${damage.fileBytes}: the ${damage.intactRecords} records before it are shown, the ${damage.laterRecords} readable records after it are not (${damage.path})`;
}
