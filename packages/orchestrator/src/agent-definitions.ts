import { readdir } from "node:fs/promises";
import { join } from "node:path";
import { lazySchema, type ModelAliasEnv, resolveModelAlias } from "@forkloop/loop-core";
import { INSTRUCTION_FILE_MAX_BYTES, readProjectFile } from "@forkloop/tools";
import { z } from "zod";
import { EXPLORE_AGENT, FORK_AGENT, PLAN_AGENT } from "./builtin-agent-types.js";
import { parseFrontmatter } from "./frontmatter.js";

/** A sub-agent type the model can start with the `Agent` tool (R-F1). */
export interface AgentDefinition {
  readonly name: string;
  readonly description: string;
  /** Instructions given to the sub-agent before its task. */
  readonly prompt: string;
  /**
   * Tools it may use; undefined = the parent's whole list but Agent/Skill. Exact names and
   * `mcp__server` / `mcp__server__*` for every tool of an MCP server (R-M1).
   */
  readonly tools?: readonly string[];
  /** Tools it may not use (Claude Code's `disallowedTools`), in the same forms. */
  readonly disallowedTools?: readonly string[];
  /** A different model breaks the shared prompt cache (R-F3): the fork pays its prefix uncached. */
  readonly model?: string;
  readonly maxTurns?: number;
  /** R-B2 `isolation: worktree`: it works in its own worktree, its change merged back when it ends. */
  readonly isolation?: "worktree";
  /** Where it was defined: a file path, or "code". */
  readonly source: string;
}

const toolList = lazySchema(() =>
  z
    .union([z.string(), z.array(z.string())])
    .transform((value) => (typeof value === "string" ? value.split(",") : value).map((name) => name.trim()))
    .transform((names) => names.filter((name) => name.length > 0)),
);

const agentFrontmatterSchema = lazySchema(() =>
  z.object({
    name: z.string().regex(/^[a-zA-Z0-9_-]+$/, "use letters, digits, '-' and '_' only"),
    description: z.string().min(1),
    tools: toolList.optional(),
    disallowedTools: toolList.optional(),
    // Claude Code's files say `model: inherit` for "same as the parent".
    model: z.string().optional(),
    maxTurns: z.number().int().positive().optional(),
    isolation: z.enum(["worktree"], { message: 'the one isolation forkloop has is "worktree"' }).optional(),
  }),
);

/**
 * Built-in general-purpose agent, available even without any definition file, and the type of an
 * Agent call that names none. As in Claude Code it is a conversation of its own (R-K3): this
 * prompt as its system prompt, the task as its only message; its instances share one warmed
 * prefix. The `fork` type is the one that continues the parent's conversation (R-F3).
 */
export const GENERAL_PURPOSE_AGENT: AgentDefinition = {
  name: "general-purpose",
  description:
    "General agent for researching questions and carrying out multi-step tasks in parallel. Starts fresh: give it everything it needs in the prompt.",
  prompt:
    "You are an agent working on one task for a parent agent, who gives it to you as the user's message. " +
    "Do the task completely with the tools you have: search broadly when you do not know where something is, " +
    "read before you change, and do not guess. Then answer with a concise report: what you found or changed " +
    "(with absolute file paths), and anything the parent must know.",
  source: "builtin",
};

/** The agent types there are without any definition file, as in Claude Code (R-F1), and `fork`. */
const BUILTIN_AGENTS: readonly AgentDefinition[] = [
  GENERAL_PURPOSE_AGENT,
  EXPLORE_AGENT,
  PLAN_AGENT,
  FORK_AGENT,
];

export type AgentDefinitionFileResult =
  | { readonly ok: true; readonly definition: AgentDefinition }
  | { readonly ok: false; readonly path: string; readonly error: string };

/** Parses one agent definition file (Markdown with YAML frontmatter; the body is the prompt). */
export function parseAgentDefinition(
  path: string,
  text: string,
  /** R-X2: the run's environment the `model` alias resolves in. */
  modelEnv: ModelAliasEnv = {},
): AgentDefinitionFileResult {
  const parsed = parseFrontmatter(text);
  if (!parsed.ok) return { ok: false, path, error: parsed.error };
  const result = agentFrontmatterSchema.safeParse(parsed.data);
  if (!result.success) {
    const issue = result.error.issues[0];
    return {
      ok: false,
      path,
      error: `frontmatter key "${issue?.path.join(".") ?? ""}": ${issue?.message ?? "invalid"} (needs name and description)`,
    };
  }
  const { name, description, tools, disallowedTools, model, maxTurns, isolation } = result.data;
  return {
    ok: true,
    definition: {
      name,
      description,
      prompt: parsed.body.trim(),
      ...(tools === undefined || tools.includes("*") ? {} : { tools }),
      ...(disallowedTools === undefined || disallowedTools.length === 0 ? {} : { disallowedTools }),
      // `model: opus` as Claude Code's agent files say it: the catalog's id.
      ...(model === undefined || model === "inherit" ? {} : { model: resolveModelAlias(model, modelEnv) }),
      ...(maxTurns === undefined ? {} : { maxTurns }),
      ...(isolation === undefined ? {} : { isolation }),
      source: path,
    },
  };
}

async function markdownFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir))
      .filter((name) => name.endsWith(".md"))
      .sort()
      .map((name) => join(dir, name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw error;
  }
}

export interface LoadedAgentDefinitions {
  readonly definitions: AgentDefinition[];
  /** Files that could not be used, with the reason (shown to the user, never fatal). */
  readonly errors: { readonly path: string; readonly error: string }[];
  /** Definition files found and not read (R-S8): a line each, with the reason and how to allow it. */
  readonly refused: string[];
}

/**
 * Loads agent definitions from `.forkloop/agents/*.md` and `.claude/agents/*.md` under `cwd` (or
 * each of `projectDirs`, outer to inner), plus `extra` ones from code. On a name clash inner
 * directories win over outer ones, `.forkloop` over `.claude`, code over files.
 * The built-in types (general-purpose, Explore, Plan, fork) are always present unless a definition
 * of the same name replaces one.
 */
export async function loadAgentDefinitionsDetailed(
  cwd: string,
  extra: readonly AgentDefinition[] = [],
  options: { projectDirs?: readonly string[]; modelEnv?: ModelAliasEnv } = {},
): Promise<LoadedAgentDefinitions> {
  const byName = new Map<string, AgentDefinition>(BUILTIN_AGENTS.map((agent) => [agent.name, agent]));
  const errors: { path: string; error: string }[] = [];
  const refused: string[] = [];
  const projectDirs = options.projectDirs ?? [cwd];
  const dirs = projectDirs.flatMap((dir) => [
    join(dir, ".claude", "agents"),
    join(dir, ".forkloop", "agents"),
  ]);
  for (const dir of dirs) {
    for (const path of await markdownFiles(dir)) {
      // R-S8: read as Read reads a file, inside the workspace (the outermost project directory).
      const read = readProjectFile(path, {
        roots: [projectDirs[0] ?? cwd],
        maxBytes: INSTRUCTION_FILE_MAX_BYTES,
        what: "agent definition",
      });
      if (read.status === "refused") refused.push(read.message);
      if (read.status !== "read") continue;
      const result = parseAgentDefinition(path, read.text, options.modelEnv);
      if (result.ok) byName.set(result.definition.name, result.definition);
      else errors.push({ path: result.path, error: result.error });
    }
  }
  for (const definition of extra) byName.set(definition.name, definition);
  return { definitions: [...byName.values()], errors, refused };
}

export async function loadAgentDefinitions(
  cwd: string,
  extra: readonly AgentDefinition[] = [],
  modelEnv?: ModelAliasEnv,
): Promise<AgentDefinition[]> {
  return (await loadAgentDefinitionsDetailed(cwd, extra, modelEnv === undefined ? {} : { modelEnv }))
    .definitions;
}
