// One racer of test/chaos/exclusive-locks-cli-race.test.ts (R-R5): a process that runs whole
// `forkloop` command lines — `batch --resume ID`, `run --resume S` — through the BUILT CLI's
// runCliInProcess, when told to. It stays up for every trial, so a trial costs the commands, not
// a node start-up; each racer is its own process (its own pid in the lock files). Commands arrive
// as JSON lines on stdin:
//   {"trial":N,"args":[...],"cwd":D,"env":{...},"at":MS}  run `forkloop ARGS` in D at time MS
// and one JSON line answers each: {"trial":N,"pid":P,"code":C,"stdout":"…","stderr":"…"}.
import { createInterface } from "node:readline";
import { runCliInProcess } from "@forkloop/cli/testing";

const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

say({ trial: 0, pid: process.pid, ready: true });
for await (const line of createInterface({ input: process.stdin })) {
  const command = JSON.parse(line);
  // Every racer starts at the same instant: a spin, not a timer, so they leave within ~1 ms.
  while (Date.now() < command.at) {}
  try {
    const result = await runCliInProcess(command.args, { cwd: command.cwd, env: command.env });
    say({
      trial: command.trial,
      pid: process.pid,
      code: result.code,
      stdout: result.stdout,
      stderr: result.stderr,
    });
  } catch (error) {
    say({
      trial: command.trial,
      pid: process.pid,
      code: -1,
      stdout: "",
      stderr: String(error?.stack ?? error),
    });
  }
}
