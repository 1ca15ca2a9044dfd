import { homedir, platform, release } from "node:os";
import { resolve } from "node:path";
import type { ModelAliasEnv, PermissionMode, TextBlockParam, Tool } from "@forkloop/loop-core";
import { permissionModeFacts } from "@forkloop/tools";
import { type AgentDefinition, loadAgentDefinitionsDetailed } from "./agent-definitions.js";
import { formatGitStatus, type GitStatus, readGitSnapshot } from "./git-status.js";
import { directoryChain, type MemoryFile, readMemoryFilesDetailed } from "./memory-files.js";
import { loadSkillsDetailed, type Skill } from "./skills.js";

export interface AssembleSessionOptions {
  readonly cwd: string;
  readonly model: string;
  readonly permissionMode: PermissionMode;
  readonly appendSystemPrompt?: string;
  /** Replaces forkloop's identity and working rules (block 0); the environment block stays. */
  readonly systemPrompt?: string;
  /** The user's home directory for user-level memory and skills; default `os.homedir()`. */
  readonly home?: string;
  /** False: no memory files (CLAUDE.md …) are looked for, as Claude Code's `--bare`. Default true. */
  readonly memoryFiles?: boolean;
  /** Directories besides the project whose memory files are read too, even without `memoryFiles` (`--restricted`). */
  readonly memoryDirectories?: readonly string[];
  /** False: no skills and no agent definitions from disk (code-given agents stay), as Claude Code's `--safe-mode`. */
  readonly skillAndAgentFiles?: boolean;
  /**
   * R-K1: only these skills (by name) are the session's — in the model's listing and the Skill
   * tool's — as the Agent SDK's `skills` list; none with `[]`. Default: every skill found.
   */
  readonly skillNames?: readonly string[];
  readonly tools: readonly Tool[];
  /** Agent definitions given in code (added to the ones found on disk). */
  readonly agents?: readonly AgentDefinition[];
  /** Fixed date for the environment block (tests, reproducible prompts); default today. */
  readonly now?: Date;
  /**
   * The run's environment: the agent files' `model` aliases resolve in it (R-X2,
   * `ANTHROPIC_DEFAULT_*_MODEL`), and the git status prefetch finds git on its PATH (R-S7).
   */
  readonly modelEnv?: ModelAliasEnv;
}

export interface AssembledSession {
  /** System blocks exactly as they will be sent; the stable ones carry cache_control. */
  readonly systemPrompt: TextBlockParam[];
  readonly cwd: string;
  readonly repoRoot: string | null;
  readonly memoryFiles: readonly MemoryFile[];
  readonly skills: readonly Skill[];
  readonly agentDefinitions: readonly AgentDefinition[];
  readonly gitStatus: GitStatus | null;
  readonly tools: readonly Tool[];
  /** Files that were found but could not be used (bad frontmatter …), for the user to fix. */
  readonly warnings: readonly string[];
  /**
   * Project files found and not read (R-S8: a link out of the workspace, a hard link, a FIFO, a
   * directory, too large), once each: a line naming the file, the reason and how to allow it,
   * for the caller to say on stderr.
   */
  readonly refused: readonly string[];
  /** Wall time of the prefetch phase (memory, skills, agents, git in parallel). */
  readonly prefetchMs: number;
}

const IDENTITY =
  "You are forkloop, an agent runtime that works on software tasks with tools. " +
  "You may be running against the forkloop simulator rather than a real model; never claim otherwise.";

const RULES = `# How to work
- Use the tools to read before you change anything; keep edits minimal and exact.
- Prefer several independent read-only tool calls in one turn: they run in parallel.
- Use the Agent tool to hand independent sub-tasks to sub-agents; they run in parallel and report back.
- File tools are confined to the workspace; paths outside it are refused.
- When the task is done, answer with a short report of what you did and what is left.`;

/**
 * R-X1: what Claude Code 2.1.332 tells a session in a linked worktree (its own `--worktree`, or one
 * the user made): stay in it, and the stash is shared (claude-cli scenario worktree-named).
 */
const WORKTREE_NOTE = [
  "This is a git worktree — an isolated copy of the repository. Run all commands from this directory. Do NOT `cd` to the original repository root.",
  "The git stash stack is shared with the main checkout and all other worktrees, and other sessions may push or pop it concurrently. Never use bare `git stash` / `git stash pop` — you could pop another session's changes. Prefer a temporary WIP commit to set work aside.",
];

function environmentText(
  options: AssembleSessionOptions,
  repoRoot: string | null,
  linkedWorktree: boolean,
  now: Date,
): string {
  return [
    "# Environment",
    `Working directory: ${resolve(options.cwd)}`,
    ...(linkedWorktree ? WORKTREE_NOTE : []),
    `Is a git repository: ${repoRoot !== null}`,
    `Platform: ${platform()} ${release()}`,
    // Date only (not time): the block must stay byte-identical for the whole session (R-F3).
    `Today's date: ${now.toISOString().slice(0, 10)}`,
    `Model: ${options.model}`,
  ].join("\n");
}

function memoryText(files: readonly MemoryFile[]): string | null {
  if (files.length === 0) return null;
  const parts = files.map((file) => {
    const origin = file.importedBy === undefined ? "" : `, imported by ${file.importedBy}`;
    return `Contents of ${file.path} (${file.scope} instructions${origin}):\n\n${file.content.trim()}`;
  });
  return `# Memory\nInstructions from memory files. Follow them; later files are more specific.\n\n${parts.join("\n\n")}`;
}

/**
 * Builds the session's system prompt after the prefetch phase (§1.2): memory files, skills,
 * agent definitions and git status are read in parallel once per session. Block 0 (identity and
 * rules) is the same for every session; block 1 (environment, memory, git, permission mode) is
 * stable for this session. Both carry cache_control so every turn and every fork reads them from
 * the prompt cache (R-F3); the moving tail is the messages.
 */
export async function assembleSession(options: AssembleSessionOptions): Promise<AssembledSession> {
  const started = performance.now();
  const cwd = resolve(options.cwd);
  const home = options.home ?? homedir();
  // The repository root first: memory, skills and agents are read from every directory between
  // it and cwd. The rest of the prefetch runs in parallel.
  const { repoRoot, status: gitStatus, linkedWorktree } = await readGitSnapshot(cwd, options.modelEnv);
  const projectDirs = directoryChain(cwd, repoRoot);
  const files = options.skillAndAgentFiles !== false;
  const [skills, agents, memoryRead] = await Promise.all([
    files ? loadSkillsDetailed(cwd, { home, projectDirs }) : { skills: [], errors: [], refused: [] },
    loadAgentDefinitionsDetailed(cwd, options.agents ?? [], {
      projectDirs: files ? projectDirs : [],
      ...(options.modelEnv === undefined ? {} : { modelEnv: options.modelEnv }),
    }),
    options.memoryFiles === false && (options.memoryDirectories ?? []).length === 0
      ? { files: [], refused: [] }
      : readMemoryFilesDetailed({
          cwd,
          repoRoot,
          home,
          ownFiles: options.memoryFiles !== false,
          additionalDirectories: options.memoryDirectories ?? [],
        }),
  ]);
  const memoryFiles = memoryRead.files;
  const prefetchMs = performance.now() - started;

  const sessionParts = [environmentText(options, repoRoot, linkedWorktree, options.now ?? new Date())];
  const memory = memoryText(memoryFiles);
  if (memory !== null) sessionParts.push(memory);
  if (gitStatus !== null) {
    sessionParts.push(
      `# Git status (snapshot at session start; it will not update)\n${formatGitStatus(gitStatus)}`,
    );
  }
  sessionParts.push(permissionModeFacts(options.permissionMode).summary);
  if (options.appendSystemPrompt !== undefined && options.appendSystemPrompt.trim().length > 0) {
    sessionParts.push(options.appendSystemPrompt.trim());
  }

  const systemPrompt: TextBlockParam[] = [
    {
      type: "text",
      text: options.systemPrompt ?? `${IDENTITY}\n\n${RULES}`,
      cache_control: { type: "ephemeral" },
    },
    { type: "text", text: sessionParts.join("\n\n"), cache_control: { type: "ephemeral" } },
  ];
  return {
    systemPrompt,
    cwd,
    repoRoot,
    memoryFiles,
    skills:
      options.skillNames === undefined
        ? skills.skills
        : skills.skills.filter((skill) => options.skillNames?.includes(skill.name)),
    agentDefinitions: agents.definitions,
    gitStatus,
    tools: options.tools,
    warnings: [...skills.errors, ...agents.errors].map((entry) => `${entry.path}: ${entry.error}`),
    refused: [...new Set([...memoryRead.refused, ...skills.refused, ...agents.refused])],
    prefetchMs,
  };
}
