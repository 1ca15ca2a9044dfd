/**
 * The simulator of `scale.bench.ts`, in a process of its own so that the measured process's memory
 * and CPU carry none of the model's. Every reply is one short text after the latency model the
 * bench passes (JSON in argv[2]). While "hold" is on (the default until "release"), each session's
 * first request waits, so the bench can read memory with every agent live at once; each session's
 * first request time (prompt `session N: …`) goes to the bench once released. The bench asks for
 * the counts of requests arrived and answered with "stats".
 */
import { type Brain, type LatencyModel, startSimulator } from "@forkloop/sim";

export type ScaleSimMessage =
  | { readonly type: "listening"; readonly url: string }
  | {
      readonly type: "stats";
      readonly arrived: number;
      readonly answered: number;
      /** Epoch ms of the first request and of the end of the latest response recorded. */
      readonly firstArrivalAt: number;
      readonly lastEndedAt: number;
    }
  | { readonly type: "first_requests"; readonly at: Readonly<Record<number, number>> };

const latency = JSON.parse(process.argv[2] ?? '"none"') as LatencyModel | "none";
const hold = process.argv[3] === "hold";
const send = (message: ScaleSimMessage) => process.send?.(message);
const epochMs = () => performance.timeOrigin + performance.now();

let release!: () => void;
const gate = hold
  ? new Promise<void>((resolve) => {
      release = resolve;
    })
  : Promise.resolve();
let arrived = 0;
let firstArrivalAt = Number.NaN;
let answered = 0;
const firstRequestAt: Record<number, number> = {};

const brain: Brain = async (request) => {
  arrived++;
  if (arrived === 1) firstArrivalAt = epochMs();
  const session = /session (\d+)/.exec(request.lastUserText ?? "")?.[1];
  if (session !== undefined) firstRequestAt[Number(session)] ??= epochMs();
  await gate;
  answered++;
  return { content: [{ type: "text", text: "ok" }] };
};

// Only the latest records kept (their end times): 10,000 bodies would make the simulator's memory
// the bench's subject.
const sim = await startSimulator({ brain, latency, recordLimit: 256 });
const lastEndedAt = () =>
  Math.max(...sim.requests().flatMap((record) => (record.endedAt === null ? [] : [record.endedAt])));
process.on("message", (message) => {
  if (message === "release") release?.();
  if (message === "stats")
    send({ type: "stats", arrived, answered, firstArrivalAt, lastEndedAt: lastEndedAt() });
  if (message === "first_requests") send({ type: "first_requests", at: firstRequestAt });
  if (message === "close") {
    release?.();
    void sim.close().then(() => process.exit(0));
  }
});
send({ type: "listening", url: sim.url });
