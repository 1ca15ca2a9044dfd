import type { ItemState } from "./job-backend.js";
import type { RunRecord } from "./queue-store.js";

/**
 * R-R10: what a queued batch's producer has seen, kept in its own memory because Redis may lose
 * it — a restart without persistence empties it, a restart from an older snapshot (a rollback)
 * takes back results, execution counts and runs recorded since. Pure: fed with what each poll
 * read, it answers with the best-known state of every item and every run that ran.
 */
export class QueueMemory {
  readonly #settled = new Map<string, ItemState>();
  readonly #attempts = new Map<string, number>();
  readonly #runs = new Map<string, RunRecord>();
  readonly #rolledBack = new Set<string>();
  /** The last full list of items Redis gave (every item, in order). */
  #items: readonly ItemState[] = [];

  constructor(initial: readonly ItemState[]) {
    this.observe(initial);
  }

  /** Items whose result Redis showed and later lost. */
  get rolledBack(): number {
    return this.#rolledBack.size;
  }

  addRuns(runs: readonly RunRecord[]): void {
    for (const run of runs) this.#runs.set(run.run, run);
  }

  /** Every distinct run seen, in the order first seen. */
  runs(): readonly RunRecord[] {
    return [...this.#runs.values()];
  }

  /** Takes in one poll's states; returns how many items newly lost a result they had. */
  observe(states: readonly ItemState[]): number {
    let lostNow = 0;
    if (states.length > 0) this.#items = states;
    for (const state of states) {
      const id = state.item.id;
      this.#attempts.set(id, Math.max(this.#attempts.get(id) ?? 0, state.attempts));
      if (state.status === "succeeded" || state.status === "failed") this.#settled.set(id, state);
      else if (this.#settled.has(id) && !this.#rolledBack.has(id)) {
        this.#rolledBack.add(id);
        lostNow++;
      }
    }
    return lostNow;
  }

  /**
   * The items' states to report: Redis's final word where it has one, else what was seen before
   * (a result Redis lost is still a result that was received); attempts are the most ever counted
   * or the runs seen, whichever is more (a rollback takes executions back too).
   */
  merged(final: readonly ItemState[]): ItemState[] {
    this.observe(final);
    const base = this.#items;
    const runsPerItem = new Map<string, number>();
    for (const run of this.#runs.values())
      runsPerItem.set(run.itemId, (runsPerItem.get(run.itemId) ?? 0) + 1);
    return base.map((state) => {
      const known = state.status === "pending" ? (this.#settled.get(state.item.id) ?? state) : state;
      const attempts = Math.max(
        known.attempts,
        this.#attempts.get(state.item.id) ?? 0,
        runsPerItem.get(state.item.id) ?? 0,
      );
      return { ...known, attempts };
    });
  }
}
