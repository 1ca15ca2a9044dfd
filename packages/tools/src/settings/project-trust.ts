import { mkdirSync, readFileSync, realpathSync } from "node:fs";
import { join, resolve } from "node:path";
import { lazySchema } from "@forkloop/loop-core";
import { z } from "zod";
import { writeFileAtomicSync } from "../atomic-write.js";
import { fsErrorCode } from "../tool-kit.js";

/** The user's list of trusted projects (R-S5): `~/.forkloop/trusted-projects.json`. */
function trustFilePath(home: string): string {
  return join(home, ".forkloop", "trusted-projects.json");
}

const trustFileSchema = lazySchema(() => z.object({ projects: z.array(z.string()) }));

/** A project directory as the trust list names it: its real path. */
function projectKey(dir: string): string {
  try {
    return realpathSync(resolve(dir));
  } catch {
    return resolve(dir);
  }
}

function readTrustFile(home: string): { projects: string[] } | { error: string } {
  const path = trustFilePath(home);
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if (fsErrorCode(error) === "ENOENT") return { projects: [] };
    return { error: `${path}: cannot read the trust list (${fsErrorCode(error)}).` };
  }
  try {
    const parsed = trustFileSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { projects: parsed.data.projects };
  } catch {
    // Reported below.
  }
  return {
    error: `${path}: not a trust list ({"projects": ["/abs/dir", …]}). Fix or delete it, then run \`forkloop trust DIR\` again.`,
  };
}

/** Whether `forkloop trust` recorded this project (an unreadable list trusts nothing). */
export function isProjectTrusted(cwd: string, home: string): boolean {
  const list = readTrustFile(home);
  return "projects" in list && list.projects.includes(projectKey(cwd));
}

/** Records `dir` in the user's trust list; its settings may then widen permissions (R-S5). */
export function trustProjectDirectory(
  dir: string,
  home: string,
): { ok: true; project: string; file: string } | { ok: false; error: string } {
  const list = readTrustFile(home);
  if ("error" in list) return { ok: false, error: list.error };
  const project = projectKey(dir);
  const file = trustFilePath(home);
  if (!list.projects.includes(project)) {
    try {
      // R-S13: settings forkloop writes are the user's alone.
      mkdirSync(join(home, ".forkloop"), { recursive: true, mode: 0o700 });
      writeFileAtomicSync(
        file,
        Buffer.from(`${JSON.stringify({ projects: [...list.projects, project] }, null, 2)}\n`),
        { newFileMode: 0o600 },
      );
    } catch (error) {
      return { ok: false, error: `${file}: cannot write the trust list (${fsErrorCode(error)}).` };
    }
  }
  return { ok: true, project, file };
}
