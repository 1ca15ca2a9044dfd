/**
 * One at a time within this process: `run` waits for the calls before it (a failed one too) and
 * then runs `task`. The apply step holds it from reading the workspace to the journal's record,
 * so two items' merges never interleave (R-B2); `git worktree add` holds another.
 */
export class SerialLock {
  #tail: Promise<unknown> = Promise.resolve();

  run<T>(task: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(task, task);
    this.#tail = result.catch(() => {});
    return result;
  }
}
