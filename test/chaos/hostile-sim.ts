import { Worker } from "node:worker_threads";
import { toolPairingViolations } from "@forkloop/loop-core/testing";
import type { FaultKind, FaultRequest, RequestRecord } from "@forkloop/sim";
import { seeded } from "./seeded.js";

/** The simulator's faults a broken network, a broken proxy or a hostile model brings (R-R1–R-R3). */
export const HOSTILE_FAULTS = [
  "malformed_sse",
  "truncated_json",
  "silence",
  "headers_then_silence",
  "ping_only",
  "drip",
  "drop",
  "duplicate_ids",
  "deep_input",
  "unknown_stop_reason",
  "huge_block",
  "html_200",
] as const satisfies readonly FaultKind[];
export type HostileFault = (typeof HOSTILE_FAULTS)[number];

/** No fault most of the time (a session must be able to finish), every attack in between. */
export function drawFaults(
  seed: number,
  count: number,
  leaveOut: readonly HostileFault[] = [],
): (FaultRequest | null)[] {
  const random = seeded(seed);
  const kinds = HOSTILE_FAULTS.filter((kind) => !leaveOut.includes(kind));
  return Array.from({ length: count }, () => {
    if (random() < 0.35) return null;
    const kind = kinds[Math.floor(random() * kinds.length)] as HostileFault;
    if (kind === "drop") return { kind, afterEvents: 1 + Math.floor(random() * 6) };
    if (kind === "ping_only" || kind === "drip") return { kind, slowMs: 50 };
    return { kind };
  });
}

/** A simulator answering with hostile faults, on its own thread (hostile-sim.worker.mjs). */
export interface HostileSim {
  readonly url: string;
  /** Its Messages requests, each with what it broke of the API's tool rules (none is the goal). */
  messageRequests(): Promise<{ record: RequestRecord; fault: string; violations: string[] }[]>;
  close(): Promise<void>;
}

/** `faults[n]` on the n-th Messages request (null or past the end: a plain reply). */
export async function startHostileSim(faults: readonly (FaultRequest | null)[]): Promise<HostileSim> {
  const worker = new Worker(new URL("./hostile-sim.worker.mjs", import.meta.url), {
    workerData: { hostileSim: true, faults },
    execArgv: [],
  });
  const url = await new Promise<string>((resolve, reject) => {
    worker.once("error", reject);
    worker.once("message", (message: { url: string }) => resolve(message.url));
  });
  return {
    url,
    async messageRequests() {
      const records = (await (await fetch(`${url}/_sim/requests`)).json()) as RequestRecord[];
      return records
        .filter((record) => record.path === "/v1/messages")
        .map((record) => ({
          record,
          fault: record.fault ?? "ok",
          violations: [
            ...toolPairingViolations(JSON.parse(record.rawBody).messages),
            // The simulator answers a request that breaks the API's rules with a 400.
            ...(record.status === 400 ? [`400: ${record.error?.message}`] : []),
          ],
        }));
    },
    async close() {
      const closed = new Promise((resolve) => worker.once("message", resolve));
      worker.postMessage("close");
      await closed;
      await worker.terminate();
    },
  };
}
