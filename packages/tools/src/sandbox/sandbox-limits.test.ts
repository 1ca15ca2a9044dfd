import { spawnSync } from "node:child_process";
import { chownSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { callTool, createOutsideDir, resultText, useTempWorkspace } from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";
import { findBubblewrap, SANDBOX_PROCESS_LIMIT, sandboxArgs } from "./bubblewrap.js";

const ws = useTempWorkspace();

/** Starts 64 `sleep` children at once and prints how many started (the rest fail with EAGAIN). */
const FORKER = `const{spawn}=require("child_process");let started=0,settled=0;const kids=[];
for(let i=0;i<64;i++){const k=spawn("sleep",["30"]);kids.push(k);
k.on("spawn",()=>{started++;done()});k.on("error",()=>done())}
function done(){if(++settled<64)return;console.log("started "+started);for(const k of kids)k.kill("SIGKILL")}`;

/**
 * bwrap with the plan's arguments, as a user the kernel holds to RLIMIT_NPROC: root is exempt
 * from it (kernel rule), and the tests run as root in CI, so they drop to `nobody` with setpriv.
 */
function forkInSandbox(processLimit: number): string {
  const dir = createOutsideDir("forkloop-nproc-");
  try {
    chownSync(dir.root, 65534, 65534);
    const bwrap = findBubblewrap() ?? "bwrap";
    const args = [
      ...sandboxArgs({ roots: [dir.root], cwd: dir.root, network: false, processLimit }),
      process.execPath,
      "-e",
      FORKER,
    ];
    const asNobody = process.getuid?.() === 0;
    const run = spawnSync(
      asNobody ? "setpriv" : bwrap,
      asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", "--", bwrap, ...args] : args,
      // stdin not a socket: Debian's bash reads ~/.bashrc when it is one and SHLVL is unset (its
      // rshd rule), and nobody cannot read /root's.
      { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] },
    );
    return `${run.stdout}${run.stderr}`.trim();
  } finally {
    dir.cleanup();
  }
}

describe("R-S9: a process limit inside the sandbox (real bwrap)", () => {
  it("R-S9: a sandboxed Bash call runs with RLIMIT_NPROC set (the default limit); unsandboxed it is not", async () => {
    const command = "grep 'Max processes' /proc/self/limits";
    const inside = resultText(
      await callTool(createBashTool({ sandbox: { enabled: true } }), { command }, ws.context()),
    );
    expect(inside).toMatch(
      new RegExp(`^Max processes\\s+${SANDBOX_PROCESS_LIMIT}\\s+${SANDBOX_PROCESS_LIMIT}\\s`),
    );
    const direct = resultText(await callTool(createBashTool(), { command }, ws.context()));
    expect(direct).not.toMatch(new RegExp(`\\s${SANDBOX_PROCESS_LIMIT}\\s+${SANDBOX_PROCESS_LIMIT}\\s`));
  });

  it("R-S9: a command that forks past the limit gets EAGAIN (a user the kernel holds to it); with a limit above it every child starts (control)", () => {
    // Node itself counts about a dozen tasks (its threads), so of 64 children well under 64 start.
    const limited = forkInSandbox(32);
    const started = Number(/started (\d+)/.exec(limited)?.[1] ?? Number.NaN);
    expect(started, limited).toBeLessThan(32);
    expect(started, limited).toBeGreaterThan(0);
    expect(forkInSandbox(4096), "control").toBe("started 64");
  }, 120_000);
});
