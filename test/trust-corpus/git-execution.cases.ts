import { existsSync, readFileSync } from "node:fs";
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
import { freshDir, initRepo, SECRETS } from "./places.js";
import { inBatches } from "./run-units.js";

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
          return judge(pointsOf(set), planted, plainGit(planted.cwd));
        });
        return results.flat();
      },
    },
  };
}

export const groups: readonly CaseGroup[] = [
  gitGroup("R-S7: forkloop's own git runs no program the repository names", GIT_POINTS),
];
