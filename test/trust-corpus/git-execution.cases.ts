import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { livePidsWithArgument } from "@forkloop/tools/testing";
import type { CaseGroup, Surface, Through } from "./corpus.js";
import {
  batchArgs,
  MODES,
  type Mode,
  modeFlags,
  modeOptions,
  ranCheck,
  runCliAgainst,
  runQueryAgainst,
  TEXT_ONLY,
} from "./drive.js";
import { commitPlanted, GIT_POINTS, type GitPoint, makeStale, plainGit } from "./git-points.js";
import {
  appendGitConfig,
  CREDENTIAL_ENV,
  freshDir,
  git,
  initRepo,
  SECRETS,
  touchPayload,
  writeScript,
} from "./places.js";
import { inBatches } from "./run-units.js";
import { type ToolCase, type ToolWorld, toolSurface } from "./tool-cases.js";

/**
 * R-S7: forkloop's own git calls (the session prefetch in `forkloop run`,
 * `batch`, `batch --dry-run` and `query()`, in every mode) run no program a repository names. Each
 * execution point of git-points.ts leaves a marker when it runs; none may appear.
 */

interface Planted {
  readonly cwd: string;
  readonly home: string;
  readonly markers: string;
}

/** A fresh repository with `points` planted, its files' stat data stale. */
function plant(dir: string, points: readonly GitPoint[]): Planted {
  const repo = initRepo(join(freshDir(dir), "repo"));
  const outside = freshDir(dir, "outside");
  const markers = freshDir(dir, "markers");
  for (const point of points) point.plant({ repo, marker: join(markers, point.id), outside });
  if (points.some((point) => point.commits)) commitPlanted(repo);
  makeStale(repo);
  return { cwd: repo, home: freshDir(dir, "home"), markers };
}

/** Which points took effect: a marker (with or without the credentials in it), a process left, a leak. */
function judge(points: readonly GitPoint[], planted: Planted, text: string): Through[] {
  const through: Through[] = [];
  for (const point of points) {
    const marker = join(planted.markers, point.id);
    if (point.leak !== undefined && text.includes(point.leak))
      through.push({ id: point.id, effect: `${point.leak} (from outside the workspace) was sent` });
    if (existsSync(marker)) {
      const env = readFileSync(marker, "utf8");
      through.push({
        id: point.id,
        effect: `the repository's program ran${env.includes(SECRETS.apiKey) ? " with ANTHROPIC_API_KEY in its environment" : ""}`,
      });
    }
    const token = point.sleepToken?.(marker);
    if (token !== undefined) {
      const pids = livePidsWithArgument(token);
      for (const pid of pids) process.kill(pid, "SIGKILL");
      if (pids.length > 0)
        through.push({ id: point.id, effect: `its process (sleep ${token}) was left running` });
    }
  }
  return through;
}

/**
 * The group for `points`, one repository per set of points that share it (git-points.ts): each set
 * through query() in two modes and through `forkloop run` in a third, the modes rotating so every
 * mode meets most sets; a real batch over the hooks set and `batch --dry-run` over the config set;
 * and the control, plain git over every set.
 */
export function gitGroup(title: string, points: readonly GitPoint[]): CaseGroup {
  const sets = [...new Set(points.map((point) => point.set))];
  const pointsOf = (set: string) => points.filter((point) => point.set === set);

  /** One session over one set, and what got through. */
  const session = async (dir: string, set: string, how: Mode | "batch" | "dry-run", query: boolean) => {
    const planted = plant(dir, pointsOf(set));
    const options = { ...planted, scenario: TEXT_ONLY };
    const seen = query
      ? await runQueryAgainst(modeOptions(how as Mode), options)
      : how === "batch" || how === "dry-run"
        ? await runCliAgainst(
            batchArgs(join(dir, "items"), 1, how === "dry-run" ? ["--dry-run"] : []),
            options,
          )
        : await runCliAgainst(["run", "hi", "--output-format", "json", ...modeFlags(how)], options);
    return [
      ...ranCheck(seen, how === "dry-run" ? 0 : 1),
      ...judge(pointsOf(set), planted, seen.requests),
    ].map((entry) => ({ ...entry, effect: `${set} set, ${query ? "query() " : ""}${how}: ${entry.effect}` }));
  };

  const everySet = (label: string, query: boolean, modes: (index: number) => readonly Mode[]): Surface => ({
    label,
    async run(dir) {
      const runs = sets.flatMap((set, index) => modes(index).map((mode) => ({ set, mode })));
      const results = await inBatches(runs, 4, ({ set, mode }, index) =>
        session(join(dir, `${index}`), set, mode, query),
      );
      return results.flat();
    },
  });

  const mode = (index: number) => MODES[index % MODES.length] as Mode;
  const one = (set: string, how: "batch" | "dry-run"): Surface => ({
    label: `forkloop batch${how === "dry-run" ? " --dry-run" : ""} (one item), ${set} points`,
    run: (dir) => session(dir, set, how, false),
  });
  return {
    title,
    cases: points.map((point) => ({ id: point.id, area: "trust-git-files", what: point.what })),
    surfaces: [
      everySet(
        "query() from @forkloop/sdk, every set of points in its own repository, two modes each",
        true,
        (index) => [mode(index), mode(index + 2)],
      ),
      everySet(
        "forkloop run, every set of points in its own repository, the modes rotating",
        false,
        (index) => [mode(index + 1)],
      ),
      ...(sets.includes("hooks") ? [one("hooks", "batch")] : []),
      ...(sets.includes("config") ? [one("config", "dry-run")] : []),
    ],
    control: {
      label: "plain git status / log (as the prefetch calls them, unhardened) runs them",
      expect: points.filter((point) => point.plainGitRuns).map((point) => point.id),
      async run(dir) {
        const results = await inBatches(sets, 4, async (set) => {
          const planted = plant(join(dir, set), pointsOf(set));
          const git = plainGit(planted.cwd);
          const through = judge(pointsOf(set), planted, git.output);
          const missed = pointsOf(set).filter(
            (point) => point.plainGitRuns && !through.some((entry) => entry.id === point.id),
          );
          // Why a program git should have run did not: the assertion names the case, git's stderr the cause.
          if (missed.length > 0)
            console.error(
              `control, set ${set}: ${missed.map((point) => point.id).join(", ")} did not run\n${git.stderr}`,
            );
          return through;
        });
        return results.flat();
      },
    },
  };
}

/**
 * The git forkloop runs to isolate a batch item (`worktree add`, `add -A`, `diff`, `update-ref`,
 * `worktree remove`): the hooks those commands run, the fsmonitor and the filter drivers
 * `.gitattributes` selects never start.
 */
interface IsolationWorld extends ToolWorld {
  readonly markers: string;
}

const ISOLATION_POINTS = [
  ["iso-git-post-checkout", "the post-checkout hook (git worktree add)"],
  ["iso-git-post-index-change", "the post-index-change hook (git add -A in the item's worktree)"],
  ["iso-git-reference-transaction", "the reference-transaction hook (refs the isolation writes)"],
  ["iso-git-fsmonitor", "core.fsmonitor (every index refresh of the item's worktree)"],
] as const;

const ISOLATION_CASES: readonly ToolCase<IsolationWorld>[] = [
  ...ISOLATION_POINTS.map(([id, what]) => ({
    id,
    area: "trust-git-files" as const,
    what: `forkloop batch --isolate runs ${what}`,
    call: () => ({ name: "Write", input: { file_path: `${id}.txt`, content: "an item's change\n" } }),
    through: (world: IsolationWorld) =>
      existsSync(join(world.markers, id)) ? "it ran, outside any sandbox" : undefined,
  })),
  {
    id: "iso-git-filter-clean",
    area: "trust-git-files",
    what: "a clean filter the repository's config defines and .gitattributes selects (git add -A of the item's worktree)",
    call: () => ({ name: "Write", input: { file_path: "filtered.txt", content: "filtered\n" } }),
    through: (world) => {
      const marker = join(world.markers, "iso-git-filter-clean");
      if (!existsSync(marker)) return undefined;
      const credentials = readFileSync(marker, "utf8").includes(SECRETS.apiKey)
        ? ", ANTHROPIC_API_KEY in its environment"
        : "";
      return `it ran, outside any sandbox${credentials}`;
    },
  },
];

function plantIsolationPoints(dir: string): IsolationWorld {
  const root = initRepo(join(freshDir(dir), "project"));
  const markers = freshDir(dir, "markers");
  const program = (id: string) => {
    const path = join(dir, "programs", id);
    writeScript(path, `${touchPayload(join(markers, id))}\ncat`);
    return path;
  };
  for (const [id] of ISOLATION_POINTS.slice(0, 3))
    writeScript(
      join(root, ".git", "hooks", id.slice("iso-git-".length)),
      `${touchPayload(join(markers, id))}`,
    );
  writeFileSync(join(root, ".gitattributes"), "filtered.txt filter=planted\n");
  git(root, "add", ".gitattributes");
  git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "-m", "attributes");
  appendGitConfig(
    root,
    `[core]\n\tfsmonitor = ${program("iso-git-fsmonitor")}\n[filter "planted"]\n\tclean = ${program("iso-git-filter-clean")}`,
  );
  return { cwd: root, home: freshDir(dir, "home"), markers };
}

/** The control: the same git steps with the credentials in the environment, unhardened. */
function plainIsolationGit(world: IsolationWorld): void {
  const env = { ...process.env, ...CREDENTIAL_ENV };
  const run = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, env, stdio: "ignore" });
  const worktree = join(world.markers, "..", "worktree");
  run(world.cwd, "worktree", "add", "--detach", "--quiet", worktree, "HEAD");
  for (const [id] of ISOLATION_POINTS) writeFileSync(join(worktree, `${id}.txt`), "an item's change\n");
  writeFileSync(join(worktree, "filtered.txt"), "filtered\n");
  run(worktree, "add", "-A");
  run(world.cwd, "update-ref", "refs/forkloop/control", "HEAD");
}

export const groups: readonly CaseGroup[] = [
  gitGroup("R-S7: forkloop's own git runs no program the repository names", GIT_POINTS),
  {
    title: "R-S7: the git that isolates batch items runs no hook, fsmonitor or filter driver",
    cases: ISOLATION_CASES,
    surfaces: [
      toolSurface<IsolationWorld>({
        cases: ISOLATION_CASES,
        plant: plantIsolationPoints,
        driver: { kind: "batch", flags: ["--isolate", "--permission-mode", "acceptEdits"] },
        agent: "batch",
      }),
    ],
    control: {
      label: "plain git worktree add, add -A and update-ref run them, the credentials in their environment",
      expect: ISOLATION_CASES.map((entry) => entry.id),
      async run(dir) {
        const world = plantIsolationPoints(dir);
        plainIsolationGit(world);
        return ISOLATION_CASES.flatMap((entry) => {
          const effect = entry.through(world, {} as never);
          return effect === undefined ? [] : [{ id: entry.id, effect }];
        });
      },
    },
  },
];
