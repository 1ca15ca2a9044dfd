/**
 * A Piscina worker entry for the pool's own tests (built to dist/testing/faulty-worker.js): the
 * real worker, with the fault a task's id ends with. `-fault-exit` ends the thread and
 * `-fault-throw` throws an uncaught error in it, each once the task's first request has started;
 * `-fault-ignore_cancel` never hears a cooperative cancel (to prove the hard kill). The tests pick
 * this file with the pool's `workerFile`, so production tasks carry no fault.
 */
import { MessageChannel } from "node:worker_threads";
import type { SubAgentEvent } from "../sub-agent-types.js";
import runTask from "../worker.js";
import type { WorkerTaskPayload } from "../worker-protocol.js";

export default async function runFaultyTask(payload: WorkerTaskPayload) {
  const fault = /-fault-(exit|throw|ignore_cancel)$/.exec(payload.task.id)?.[1];
  if (fault === undefined) return runTask(payload);
  if (fault === "ignore_cancel") {
    // The parent's cancel goes to a port nobody listens on.
    const deaf = new MessageChannel();
    try {
      return await runTask({ ...payload, control: deaf.port1 });
    } finally {
      deaf.port2.close();
      payload.control.close();
    }
  }
  // The events pass through here, so the fault fires once the first request_start has gone by.
  const relay = new MessageChannel();
  let fired = false;
  relay.port2.on("message", (event: SubAgentEvent) => {
    payload.events.postMessage(event);
    if (event.type !== "request_start" || fired) return;
    fired = true;
    if (fault === "exit") process.exit(1); // a worker's process.exit ends this thread only
    setImmediate(() => {
      throw new Error("test fault: uncaught error in the worker");
    });
  });
  try {
    return await runTask({ ...payload, events: relay.port1 });
  } finally {
    relay.port2.close();
    payload.events.close();
  }
}
