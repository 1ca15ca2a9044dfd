/**
 * Cases of the trust corpus that get through until another engineer's fix lands on main, each with
 * its reason. The suite requires each still to get through (corpus-suite.ts), so an entry is removed
 * as soon as its fix lands. Never add a case here to hide a hole of this corpus's own classes: those
 * are fixed or written up in /work/notes/trust-corpus-holes.md with the lead told.
 */
export const PENDING: Readonly<Record<string, string>> = {
  "git-alternates-outside":
    "hole (trust-corpus-holes.md: alternates): forkloop's own git follows objects/info/alternates to another repository outside the workspace, and git log sends its commit subjects to the model",
};
