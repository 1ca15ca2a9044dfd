import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";
import { type SandboxPlan, sandboxArgs } from "./bubblewrap.js";

/**
 * R-S9: a host socket that closes between the sandbox's listing and bwrap's setup (a short-lived
 * agent's, another session's) made bwrap fail ("Can't create file at …: Read-only file system")
 * and the call with it. The sandbox says when it is about to run the command; a setup that
 * failed before that is prepared afresh and tried again, and a command that ran is never run
 * twice. The vanished socket is a cover for a path that does not exist, through the code seam.
 */
const ws = useTempWorkspace();

/** bwrap's arguments with a socket cover for a missing path in the first `times` plans. */
function vanishing(times: number): { args: (plan: SandboxPlan) => string[]; plans: () => number } {
  let plans = 0;
  return {
    args: (plan) => {
      plans++;
      // Outside /tmp (a fresh tmpfs inside, where bwrap could make the missing name).
      const gone = plans <= times ? [`/var/tmp/forkloop-gone-${process.pid}-${plans}.sock`] : [];
      return sandboxArgs({ ...plan, sockets: [...(plan.sockets ?? []), ...gone] });
    },
    plans: () => plans,
  };
}

const run = async (args: (plan: SandboxPlan) => string[], command: string) =>
  resultText(
    await callTool(
      createBashTool({ sandbox: { enabled: true }, home: join(ws.root, "home"), sandboxArgs: args }),
      { command },
      ws.context(),
    ),
  );

describe("R-S9: a sandbox whose setup failed is set up again (real bwrap)", () => {
  it("R-S9: a socket cover whose socket vanished fails the first setup; the call is prepared again and the command runs once; with every setup failing the error is the result and nothing ran (control)", async () => {
    const once = vanishing(1);
    const output = await run(once.args, "echo ran >> runs.txt && echo done");
    expect(output).toBe("done");
    expect(once.plans()).toBe(2);
    expect(readFileSync(join(ws.root, "runs.txt"), "utf8")).toBe("ran\n");
    // Control: the setup fails every time — bwrap's own error, the command never ran.
    const always = vanishing(99);
    const failed = await run(always.args, "echo ran >> runs.txt");
    expect(failed).toMatch(/bwrap: Can't create file at \/var\/tmp\/forkloop-gone-/);
    expect(always.plans()).toBe(3);
    expect(readFileSync(join(ws.root, "runs.txt"), "utf8")).toBe("ran\n");
  });

  it("R-S9: a command that ran and failed, printing bwrap's setup error itself, is not run again", async () => {
    const plain = vanishing(0);
    const output = await run(
      plain.args,
      'echo ran >> runs.txt; echo "bwrap: Can\'t create file at /x.sock: Read-only file system" >&2; exit 1',
    );
    expect(output).toMatch(/Exit code 1/);
    expect(plain.plans()).toBe(1);
    expect(readFileSync(join(ws.root, "runs.txt"), "utf8")).toBe("ran\n");
  });

  it("R-S9: arguments without the started marker (a seam's own bind set) run the command once — a launcher that says nothing is no proof nothing ran", async () => {
    const output = await run((plan) => {
      const { startedFd: _fd, ...unmarked } = plan;
      return sandboxArgs(unmarked);
    }, "echo ran >> runs.txt && echo done");
    expect(output).toBe("done");
    expect(readFileSync(join(ws.root, "runs.txt"), "utf8")).toBe("ran\n");
  });
});
