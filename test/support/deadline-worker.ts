import { Worker } from "node:worker_threads";

/** What a task list did: every result, or the task that had not answered by the deadline. */
export type TaskListOutcome<T> =
  | { readonly completed: true; readonly results: readonly T[] }
  | { readonly completed: false; readonly stuckAt: number; readonly results: readonly T[] };

type WorkerMessage<T> = "ready" | { readonly start: number } | { readonly done: number; readonly result: T };

/**
 * Runs a worker script over `tasks` (its `workerData`). The script posts "ready" once its imports
 * are loaded, then `{ start: i }` and `{ done: i, result }` for each task in turn. A task that has
 * not answered `deadlineMs` after its start is a hang: the worker is terminated (V8 interrupts
 * even a running regular expression) and the outcome names the task. The tests assert "no hang",
 * never a speed; a slow start on a busy machine counts for nothing. The worker runs without
 * vitest's "source" condition, so it loads the built packages.
 */
export function runTasksWithDeadline<T>(
  script: URL,
  tasks: readonly unknown[],
  deadlineMs: number,
): Promise<TaskListOutcome<T>> {
  const worker = new Worker(script, { workerData: tasks, execArgv: [] });
  const results: T[] = [];
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (outcome: TaskListOutcome<T>) => {
      clearTimeout(timer);
      void worker.terminate().then(() => resolve(outcome));
    };
    worker.on("message", (message: WorkerMessage<T>) => {
      if (message === "ready") return;
      clearTimeout(timer);
      if ("start" in message) {
        const index = message.start;
        timer = setTimeout(() => finish({ completed: false, stuckAt: index, results }), deadlineMs);
        return;
      }
      results.push(message.result);
      if (results.length === tasks.length) finish({ completed: true, results });
    });
    worker.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}
