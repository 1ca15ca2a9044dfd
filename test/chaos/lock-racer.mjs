// One racer of test/chaos/exclusive-locks.test.ts (R-R5): a light process that opens a batch's
// journal or a session's lock the way `forkloop batch --resume` and `forkloop run --resume` do,
// from the BUILT packages, when told to. Commands arrive as JSON lines on stdin:
//   {"trial":N,"kind":"batch","dir":D,"at":MS}  open the batch at D at time MS; the holder
//                                               completes every pending item, then holds
//   {"trial":N,"kind":"session","dir":D,"id":S,"at":MS}
//   {"trial":N,"release":true}                  the holder lets go
// and one JSON line answers each open: {"trial":N,"outcome":"held"|"refused"|"error",...}.
import { createInterface } from "node:readline";
import { openLocalJournalBackend } from "@forkloop/batch";
import { itemResult } from "@forkloop/batch/testing";
import { lockSession } from "@forkloop/sdk";
import { LockHeldError } from "@forkloop/sdk/owner-lock";

const result = itemResult();
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
let holding;

async function open(command) {
  // Every racer starts at the same instant: a spin, not a timer, so they leave within ~1 ms.
  while (Date.now() < command.at) {}
  try {
    if (command.kind === "batch") {
      const backend = await openLocalJournalBackend({ dir: command.dir, batchId: `trial-${command.trial}` });
      const completed = [];
      for (let claim = await backend.claim(`pid-${process.pid}`); claim; claim = await backend.claim("w")) {
        await backend.complete(claim, result);
        completed.push(claim.item.id);
      }
      holding = () => backend.close();
      say({ trial: command.trial, outcome: "held", completed });
    } else {
      const lock = await lockSession(command.dir, command.id);
      holding = () => lock.release();
      say({ trial: command.trial, outcome: "held", completed: [] });
    }
  } catch (error) {
    const refused = error instanceof LockHeldError;
    say({
      trial: command.trial,
      outcome: refused ? "refused" : "error",
      message: String(error?.message ?? error),
    });
  }
}

say({ trial: 0, outcome: "ready" });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  if (command.release) {
    await holding?.();
    holding = undefined;
    say({ trial: command.trial, outcome: "released" });
  } else {
    await open(command);
  }
}
