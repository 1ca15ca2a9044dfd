import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** git in `cwd` with a fixed identity, so a commit needs no user configuration. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });

/**
 * A new project directory holding `files` (path → text); unless `repo` is false, a git repository
 * whose one commit ("base") holds them all — the clean checkout an isolated batch starts from.
 */
export async function gitProject(dir: string, files: Record<string, string>, repo = true): Promise<string> {
  await mkdir(dir);
  for (const [path, text] of Object.entries(files)) await writeFile(join(dir, path), text);
  if (repo) {
    git(dir, "init", "-q");
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "base");
  }
  return dir;
}
