import { spawn } from "node:child_process";

export interface GroupRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  /** True when the timeout killed the group. */
  timedOut: boolean;
}

/**
 * Runs a peer or forkloop process in its own process group: on a timeout the whole group is
 * killed (the real SDK's Claude Code child with it), and whatever the process left running is
 * ended once it exits, so nothing a run started outlives it.
 */
export async function runInGroup(
  command: string,
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<GroupRun> {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, detached: true });
  const killGroup = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
    } catch {
      // the group has already ended
    }
  };
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    killGroup();
  }, options.timeoutMs);
  const exitCode = await new Promise<number | null>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve(code));
  });
  clearTimeout(timer);
  killGroup();
  return { exitCode, stdout, stderr, timedOut };
}
