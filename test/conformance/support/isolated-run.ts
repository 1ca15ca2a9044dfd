import { mkdir, mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/**
 * The directories of one run of one side: a home of its own (Claude Code's `~/.claude`, forkloop's
 * `~/.forkloop`), a working directory with the scenario's files, and a temporary directory.
 */
export interface RunDirs {
  root: string;
  home: string;
  work: string;
  tmp: string;
}

export async function makeRunDirs(
  name: string,
  files: Readonly<Record<string, string>> = {},
  parent?: string,
): Promise<RunDirs> {
  const root = await realpath(await mkdtemp(join(parent ?? tmpdir(), `${name}-`)));
  const dirs = { root, home: join(root, "home"), work: join(root, "work"), tmp: join(root, "tmp") };
  await Promise.all([mkdir(dirs.home), mkdir(dirs.work), mkdir(dirs.tmp)]);
  for (const [path, content] of Object.entries(files)) {
    const file = join(dirs.work, path);
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
  }
  return dirs;
}

/**
 * The environment of a peer or forkloop process: nothing inherited but PATH and the locale (a
 * developer's own ANTHROPIC_*, CLAUDE_* or FORKLOOP_* variables never leak in), the scripted
 * server as the endpoint, and the variables that keep the real Claude Code offline and quiet —
 * no telemetry, error reports, auto-update, feedback surveys or other nonessential traffic.
 */
export function isolatedEnv(
  dirs: RunDirs,
  endpoint: { url: string; apiKey: string },
): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    LANG: "C.UTF-8",
    HOME: dirs.home,
    TMPDIR: dirs.tmp,
    CLAUDE_CONFIG_DIR: join(dirs.home, ".claude"),
    CLAUDE_CODE_TMPDIR: dirs.tmp,
    FORKLOOP_HOME: join(dirs.home, ".forkloop"),
    ANTHROPIC_BASE_URL: endpoint.url,
    ANTHROPIC_API_KEY: endpoint.apiKey,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_TELEMETRY: "1",
    DISABLE_ERROR_REPORTING: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_BUG_COMMAND: "1",
    CLAUDE_CODE_DISABLE_FEEDBACK_SURVEY: "1",
    NO_COLOR: "1",
  };
}
