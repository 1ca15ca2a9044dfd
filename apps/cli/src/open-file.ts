import { spawn } from "node:child_process";

/**
 * Opens a file with the desktop's handler: `$BROWSER` when set (as git, Python's webbrowser and
 * others honour it), else `open` (macOS), `start` (Windows) or `xdg-open`. Resolves to an error
 * message when nothing could be started (the caller prints it; the report is written either way).
 */
export function openFile(path: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const [command, ...args] =
    env.BROWSER !== undefined && env.BROWSER !== ""
      ? [env.BROWSER, path]
      : process.platform === "darwin"
        ? ["open", path]
        : process.platform === "win32"
          ? ["cmd", "/c", "start", "", path]
          : ["xdg-open", path];
  return new Promise((resolve) => {
    const child = spawn(command!, args, { detached: true, stdio: "ignore", env });
    child.once("error", (error) => resolve(`could not start ${command}: ${error.message}`));
    child.once("spawn", () => {
      child.unref();
      resolve(undefined);
    });
  });
}
