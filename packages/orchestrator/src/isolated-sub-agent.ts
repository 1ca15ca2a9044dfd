import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, sep } from "node:path";
import {
  changesPatch,
  executePlan,
  git,
  isolationRecorded,
  mergeChanges,
  openWorkspaceIsolation,
  readIfPresent,
  readPlan,
  SerialLock,
  writeDurably,
  writePlan,
} from "@forkloop/tools/workspace";
import type { SubAgentResult } from "./sub-agent-types.js";

/**
 * R-B2–R-B4 for sub-agents: an `Agent` call with `isolation: "worktree"` (in its input or its
 * agent definition, as Claude Code names it) runs in its own git worktree of the parent's tree —
 * HEAD plus the uncommitted changes, so it sees what the parent sees — or, outside git, a copy.
 * When it ends its change is merged into the parent's tree once, three ways per path, under one
 * lock per tree (so two isolated sub-agents never interleave their applies); a change that
 * overlaps the tree's is not applied and the parent's tool result says so, with the kept
 * worktree and the diff. Worktrees do not leak: removed once the change is applied (or there is
 * none), kept and named on a conflict or a failure, and swept when the session is resumed. The
 * apply's plan is durable before the first path is written, so an apply a kill -9 cut short is
 * finished by that sweep (never left half-applied, never applied twice).
 */
export interface IsolatedSubAgent {
  /** The sub-agent's working directory: the parent's cwd at the same relative path in the copy. */
  readonly cwd: string;
  /** The parent's roots with the isolated tree's own replaced by the copy's. */
  readonly workspaceRoots: readonly string[];
  /** Prepended to the sub-agent's task: where it works (its prefix still names the parent's tree). */
  readonly note: string;
  /** Applies the finished sub-agent's change (a completed one only) and says what happened. */
  finish(result: SubAgentResult): Promise<IsolationOutcome>;
}

export interface IsolationOutcome {
  /** Appended to the parent's tool result. */
  readonly report: string;
  /** The change was not applied (a conflict): the call is an error for the parent. */
  readonly conflict: boolean;
}

/** Where an isolated sub-agent's apply plan lives in its state dir while the apply runs. */
const APPLY_DIR = "apply";

/** One apply at a time per tree within this process. */
const applyLocks = new Map<string, SerialLock>();
function applyLock(root: string): SerialLock {
  let lock = applyLocks.get(root);
  if (lock === undefined) {
    lock = new SerialLock();
    applyLocks.set(root, lock);
  }
  return lock;
}

/** Where an isolated sub-agent's state lives: under its session when it has one, else a temp dir. */
export async function isolationStateDir(
  transcripts: { readonly sessionsDir: string; readonly sessionId: string } | undefined,
  agentId: string,
): Promise<string> {
  if (transcripts === undefined) return mkdtemp(join(tmpdir(), `forkloop-${agentId}-`));
  return join(isolatedAgentsDir(transcripts.sessionsDir, transcripts.sessionId), agentId);
}

/** The directory a session's isolated sub-agents keep their worktrees' state in. */
export function isolatedAgentsDir(sessionsDir: string, sessionId: string): string {
  return join(sessionsDir, sessionId, "isolated-agents");
}

export async function isolateSubAgent(options: {
  readonly cwd: string;
  readonly workspaceRoots: readonly string[];
  readonly stateDir: string;
  readonly agentId: string;
  /** The user's home, whose shell and settings files a merge never writes (R-S10). */
  readonly home?: string;
}): Promise<IsolatedSubAgent> {
  const ref = `refs/forkloop/agent-bases/${options.agentId}`;
  const isolation = await openWorkspaceIsolation({
    cwd: options.cwd,
    batchDir: options.stateDir,
    base: "working-tree",
    ref,
  });
  const workspace = await isolation.create(options.agentId);
  const inside = (path: string) => path === isolation.root || path.startsWith(`${isolation.root}${sep}`);
  const moved = (path: string) =>
    inside(path) ? join(workspace.root, relative(isolation.root, path)) : path;
  const discard = async () => {
    await workspace.remove();
    await rm(options.stateDir, { recursive: true, force: true });
    if (isolation.mode === "worktree") await git(isolation.root, ["update-ref", "-d", ref]);
  };
  const kept = `its ${isolation.mode === "worktree" ? "worktree" : "copy"} is kept at ${workspace.root}`;
  return {
    cwd: workspace.dir,
    workspaceRoots: options.workspaceRoots.map(moved),
    note: `<workspace>You work in your own ${isolation.mode === "worktree" ? "git worktree" : "copy"} of ${isolation.root}: ${workspace.root}. Every file is there at the same relative path, as it was when you started (uncommitted changes included). Read and change files only there (relative paths and commands already resolve there); when you finish, your changes are merged into ${isolation.root}. Changes made anywhere else are not kept.</workspace>\n\n`,
    async finish(result) {
      if (result.status !== "completed") {
        return {
          report: `[isolation: the sub-agent did not complete, so nothing of its change was applied; ${kept}]`,
          conflict: false,
        };
      }
      const changes = await workspace.changes();
      if (changes.length === 0) {
        await discard();
        return { report: "[isolation: no change to apply; its worktree is removed]", conflict: false };
      }
      return applyLock(isolation.root).run(async () => {
        const merged = await mergeChanges(
          isolation.root,
          changes,
          options.home === undefined ? {} : { home: options.home },
        );
        const paths = changes.map((change) => change.path).join(", ");
        if (!merged.ok || merged.plan.files.length === 0) {
          if (merged.ok) {
            await discard();
            return { report: `[isolation: ${paths} already as the sub-agent left them]`, conflict: false };
          }
          const patch = join(options.stateDir, "change.patch");
          await writeDurably(patch, await changesPatch(changes));
          const names = merged.conflicts
            .map((conflict) => `${conflict.path} (${conflict.reason})`)
            .join(", ");
          return {
            report: `[isolation: its change was NOT applied — it overlaps changes made in ${isolation.root} meanwhile: ${names}. Nothing of it was written; ${kept}, its diff in ${patch} (git apply --3way ${patch} applies it by hand).]`,
            conflict: true,
          };
        }
        // R-B3: durable before the first write, so a kill -9 part-way is finished on resume.
        const planDir = join(options.stateDir, APPLY_DIR);
        await writePlan(planDir, merged.plan, merged.contents);
        const done = await executePlan(isolation.root, planDir, merged.plan, merged.contents);
        if (done.diverged.length > 0) {
          // Reported now, so a resume's sweep has nothing to finish: the worktree and diff stay.
          await rm(planDir, { recursive: true, force: true });
          const patch = join(options.stateDir, "change.patch");
          await writeDurably(patch, await changesPatch(changes));
          return {
            report: `[isolation: ${done.diverged.join(", ")} changed in ${isolation.root} while the change was applied, so those paths were not written (${done.written.join(", ") || "none"} were); ${kept}, its diff in ${patch}]`,
            conflict: true,
          };
        }
        await discard();
        return {
          report: `[isolation: its change to ${done.written.join(", ")} is merged into ${isolation.root}; its worktree is removed]`,
          conflict: false,
        };
      });
    },
  };
}

/**
 * R-B2: the worktrees and copies an earlier run of the session left (a conflict's, a failure's,
 * or a kill's) — removed when the session is resumed; returns how many. R-B3: an apply a kill cut
 * short (its plan still there) is finished first, from its plan: the paths already written are
 * left, the rest written; when a path changed since, its state is kept instead of swept.
 */
export async function sweepIsolatedAgents(sessionsDir: string, sessionId: string): Promise<number> {
  const dir = isolatedAgentsDir(sessionsDir, sessionId);
  const left = await readdir(dir).catch(() => [] as string[]);
  for (const agentId of left) {
    const stateDir = join(dir, agentId);
    // Killed before its record was written: no worktree was made from it.
    const recorded = await isolationRecorded(stateDir).catch(() => false);
    const isolation = recorded
      ? await openWorkspaceIsolation({ cwd: stateDir, batchDir: stateDir })
      : undefined;
    if (isolation !== undefined) {
      if (!(await finishCutApply(isolation.root, join(stateDir, APPLY_DIR)))) continue;
      await isolation.sweep();
      if (isolation.mode === "worktree")
        await git(isolation.root, ["update-ref", "-d", `refs/forkloop/agent-bases/${agentId}`]);
    }
    await rm(stateDir, { recursive: true, force: true });
  }
  return left.length;
}

/**
 * Finishes the apply whose plan is in `planDir`, if any. False when a path changed since: those
 * paths are not written over, and the worktree (listed by `git worktree list`) and the plan (every
 * path with its content) are kept, never lost.
 */
async function finishCutApply(root: string, planDir: string): Promise<boolean> {
  if ((await readIfPresent(join(planDir, "plan.json"))) === undefined) return true;
  const done = await executePlan(root, planDir, await readPlan(planDir));
  return done.diverged.length === 0;
}
