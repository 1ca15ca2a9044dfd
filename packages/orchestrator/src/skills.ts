import { readdir } from "node:fs/promises";
import { dirname, join } from "node:path";
import { lazySchema } from "@forkloop/loop-core";
import { INSTRUCTION_FILE_MAX_BYTES, readProjectFile } from "@forkloop/tools";
import { z } from "zod";
import { parseFrontmatter } from "./frontmatter.js";

/** A skill: a SKILL.md whose body a fork runs with its own token budget and history (R-F1). */
export interface Skill {
  readonly name: string;
  readonly description: string;
  readonly instructions: string;
  /** Built-in tools the skill may use (`allowed-tools`); undefined = the caller's tools. */
  readonly allowedTools?: readonly string[];
  /** The skill's directory (its SKILL.md may refer to files beside it). */
  readonly dir: string;
  readonly path: string;
}

const skillFrontmatterSchema = lazySchema(() =>
  z.object({
    name: z.string().min(1).optional(),
    description: z.string().min(1),
    "allowed-tools": z
      .union([z.string(), z.array(z.string())])
      .transform((value) => (typeof value === "string" ? value.split(",") : value).map((name) => name.trim()))
      .optional(),
  }),
);

export type SkillFileResult =
  | { readonly ok: true; readonly skill: Skill }
  | { readonly ok: false; readonly path: string; readonly error: string };

function parseSkill(path: string, text: string): SkillFileResult {
  const parsed = parseFrontmatter(text);
  if (!parsed.ok) return { ok: false, path, error: parsed.error };
  const result = skillFrontmatterSchema.safeParse(parsed.data);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, path, error: `frontmatter key "${issue?.path.join(".") ?? ""}": ${issue?.message}` };
  }
  const dir = dirname(path);
  const allowed = result.data["allowed-tools"]?.filter((name) => name.length > 0);
  return {
    ok: true,
    skill: {
      // Claude Code names a skill after its directory when the frontmatter does not.
      name: result.data.name ?? dir.split(/[\\/]/).pop() ?? "skill",
      description: result.data.description,
      instructions: parsed.body.trim(),
      ...(allowed === undefined ? {} : { allowedTools: allowed }),
      dir,
      path,
    },
  };
}

async function skillFiles(root: string): Promise<string[]> {
  let entries: import("node:fs").Dirent[];
  try {
    entries = await readdir(root, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
  return entries
    .filter((entry) => entry.isDirectory())
    .map((entry) => join(root, entry.name, "SKILL.md"))
    .sort();
}

export interface LoadedSkills {
  readonly skills: Skill[];
  readonly errors: { readonly path: string; readonly error: string }[];
  /** SKILL.md files found and not read (R-S8): a line each, with the reason and how to allow it. */
  readonly refused: string[];
}

/**
 * Finds skills in `.forkloop/skills/<name>/SKILL.md` and `.claude/skills/<name>/SKILL.md` under
 * `cwd` — or under each of `projectDirs` (the repository root down to cwd) — and under `home`.
 * Later roots win on a name clash: home < outer directories < inner; .claude < .forkloop.
 */
export async function loadSkillsDetailed(
  cwd: string,
  options: { home?: string; projectDirs?: readonly string[] } = {},
): Promise<LoadedSkills> {
  const projectDirs = options.projectDirs ?? [cwd];
  // R-S8: a skill is read as Read reads a file, inside the directory it belongs to: the user's
  // home for theirs, the workspace (the outermost project directory) for the project's.
  const workspace = [projectDirs[0] ?? cwd];
  const roots = [
    ...(options.home === undefined
      ? []
      : [join(options.home, ".claude", "skills"), join(options.home, ".forkloop", "skills")].map((dir) => ({
          dir,
          inside: [options.home as string],
        }))),
    ...projectDirs.flatMap((dir) =>
      [join(dir, ".claude", "skills"), join(dir, ".forkloop", "skills")].map((skills) => ({
        dir: skills,
        inside: workspace,
      })),
    ),
  ];
  const byName = new Map<string, Skill>();
  const errors: { path: string; error: string }[] = [];
  const refused: string[] = [];
  for (const root of roots) {
    for (const path of await skillFiles(root.dir)) {
      const read = readProjectFile(path, {
        roots: root.inside,
        maxBytes: INSTRUCTION_FILE_MAX_BYTES,
        what: "skill",
      });
      if (read.status === "refused") refused.push(read.message);
      if (read.status !== "read") continue; // a directory without SKILL.md
      const text = read.text;
      const result = parseSkill(path, text);
      if (result.ok) byName.set(result.skill.name, result.skill);
      else errors.push({ path: result.path, error: result.error });
    }
  }
  return { skills: [...byName.values()], errors, refused };
}
