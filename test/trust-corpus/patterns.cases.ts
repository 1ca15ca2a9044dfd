import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { startSimulator } from "@forkloop/sim";
import type { CaseGroup, CorpusCase, Surface, Through } from "./corpus.js";
import {
  batchArgs,
  runCliAgainst,
  type Seen,
  scenarioFor,
  scenarioForMainAndSub,
  startCliAgainst,
} from "./drive.js";
import { CREDENTIAL_ENV, freshDir, initRepo } from "./places.js";
import { callsFor, type ToolCase, type ToolWorld, unanswered } from "./tool-cases.js";

/**
 * R-S12: a pattern the model supplies — Grep's regular expression, Glob's
 * pattern, Grep's `glob` filter, LS's `ignore` list, a glob in a Bash command the permission check
 * expands — runs in bounded time, and a signal ends the run promptly. Each pattern here takes
 * hours on a backtracking engine against the files planted (a line of 48 `a`s and a `!`, a file
 * name of 60 `a`s). The run must end on its own and answer every call; a hang is caught by a
 * watchdog far above a healthy run's time.
 */

interface PatternWorld extends ToolWorld {
  readonly root: string;
}

const NAME = "a".repeat(60);
const STARS = `${"*a".repeat(12)}*b`;
const BRACES = "{a,b}".repeat(20);

type PatternCase = ToolCase<PatternWorld>;

const pattern = (id: string, what: string, name: string, input: Record<string, unknown>): PatternCase => ({
  id,
  area: "trust-patterns",
  what,
  call: () => ({ name, input }),
  // The effect of an unbounded pattern is the hang itself, judged per run (below).
  through: () => undefined,
});

const GREP_REGEX: readonly PatternCase[] = [
  pattern("pat-grep-nested-plus", "Grep (a+)+$", "Grep", {
    pattern: "(a+)+$",
    path: "redos.txt",
    output_mode: "content",
  }),
  pattern("pat-grep-alternation-star", "Grep (a|a)*$", "Grep", { pattern: "(a|a)*$", path: "redos.txt" }),
  pattern("pat-grep-overlapping-alternation", "Grep (a|aa)+$", "Grep", {
    pattern: "(a|aa)+$",
    path: "redos.txt",
  }),
  pattern("pat-grep-optional-run", "Grep ^(a?){40}a{40}$", "Grep", {
    pattern: "^(a?){40}a{40}$",
    path: "redos.txt",
  }),
  pattern("pat-grep-word-space", "Grep ^(\\w+\\s?)*$", "Grep", {
    pattern: "^(\\w+\\s?)*$",
    path: "redos.txt",
    output_mode: "count",
  }),
  pattern("pat-grep-case-insensitive", "Grep (A+)+$ with -i", "Grep", {
    pattern: "(A+)+$",
    "-i": true,
    path: "redos.txt",
  }),
  pattern("pat-grep-multiline", "Grep ([\\s\\S]*a)+! with multiline", "Grep", {
    pattern: "(a|[\\s\\S])+b",
    multiline: true,
    path: "redos.txt",
  }),
  pattern("pat-grep-backreference", "Grep ^(a+)+\\1x (a backreference)", "Grep", {
    pattern: "^(a+)+\\1x",
    path: "redos.txt",
  }),
  pattern("pat-grep-lookahead", "Grep ^(?=(a+)+$) (a lookahead)", "Grep", {
    pattern: "^(?=(a+)+$)",
    path: "redos.txt",
  }),
  pattern("pat-grep-whole-tree", "Grep (a+)+$ over the whole tree with content and context", "Grep", {
    pattern: "(a+)+$",
    output_mode: "content",
    "-C": 2,
  }),
];

const GLOB: readonly PatternCase[] = [
  pattern("pat-glob-stars", `Glob ${STARS}`, "Glob", { pattern: STARS, path: "names" }),
  pattern("pat-glob-globstar-stars", `Glob **/${STARS}`, "Glob", { pattern: `**/${STARS}` }),
  pattern("pat-glob-braces", `Glob with 20 brace pairs (2^20 alternatives)`, "Glob", {
    pattern: `names/${BRACES}`,
  }),
  pattern("pat-glob-range", "Glob {1..10000000}", "Glob", { pattern: "names/{1..10000000}" }),
  pattern("pat-glob-extglob", "Glob +(a|aa)… extglobs", "Glob", {
    pattern: `names/${"+(a|aa)".repeat(10)}b`,
  }),
];

const FILTERS: readonly PatternCase[] = [
  pattern("pat-grep-glob-stars", `Grep's glob filter ${STARS}`, "Grep", { pattern: "x", glob: STARS }),
  pattern("pat-grep-glob-braces", "Grep's glob filter with 20 brace pairs", "Grep", {
    pattern: "x",
    glob: BRACES,
  }),
  pattern("pat-ls-ignore-stars", `LS ignore [${STARS}]`, "LS", { path: "names", ignore: [STARS] }),
  pattern("pat-ls-ignore-braces", "LS ignore with 20 brace pairs", "LS", { path: "names", ignore: [BRACES] }),
];

/** Patterns the repository planted (.gitignore, its deny rules), reached by ordinary calls. */
const REPOSITORY: readonly PatternCase[] = [
  pattern("pat-gitignore-walk", `a .gitignore line ${STARS}, a Glob of every file`, "Glob", {
    pattern: "**/*",
  }),
  pattern("pat-gitignore-grep", "the same .gitignore, a Grep over the whole tree", "Grep", {
    pattern: "x",
    output_mode: "files_with_matches",
  }),
  pattern(
    "pat-deny-rule-read",
    `an untrusted project's deny rule Read(names/${STARS}), a Read of a 60-a name`,
    "Read",
    {
      file_path: `names/${NAME}`,
    },
  ),
  pattern("pat-deny-rule-bash", `an untrusted project's deny rule Bash(ls ${STARS})`, "Bash", {
    command: `ls names/${NAME}`,
  }),
];

const BASH_GLOBS: readonly PatternCase[] = [
  pattern("pat-bash-glob-stars", `Bash ls names/${STARS} (the permission check expands it)`, "Bash", {
    command: `ls names/${STARS}`,
  }),
  pattern("pat-bash-glob-braces", "Bash cat with 20 brace pairs", "Bash", { command: `cat names/${BRACES}` }),
  pattern("pat-bash-glob-globstar", "Bash ls with globstars and stars", "Bash", {
    command: `ls ${"**/".repeat(8)}${STARS}`,
  }),
];

function plant(dir: string): PatternWorld {
  const root = initRepo(join(freshDir(dir), "project"));
  writeFileSync(join(root, "redos.txt"), `${"a".repeat(48)}!\n${"word ".repeat(40)}!\n${"x".repeat(48)}\n`);
  mkdirSync(join(root, "names"), { recursive: true });
  writeFileSync(join(root, "names", NAME), "x\n");
  mkdirSync(join(root, "names", `${NAME}d`), { recursive: true });
  writeFileSync(join(root, "names", `${NAME}d`, NAME), "x\n");
  writeFileSync(join(root, ".env"), "KEY=1\n");
  // Patterns the repository supplies: a .gitignore line every walk reads, an untrusted project's
  // deny rules (narrowing rules are kept) every Read and Bash call is checked against.
  writeFileSync(join(root, ".gitignore"), `${STARS}\n${BRACES}\nnames/**/${"*a".repeat(10)}*!\n`);
  mkdirSync(join(root, ".claude"), { recursive: true });
  writeFileSync(
    join(root, ".claude", "settings.json"),
    JSON.stringify({
      permissions: { deny: [`Read(names/${STARS})`, `Bash(ls ${STARS})`, `Read(${BRACES})`] },
    }),
  );
  return { root, cwd: root, home: freshDir(dir, "home") };
}

/** Above any healthy run on a loaded machine; a backtracking engine needs hours for these. */
const HANG_MS = 150_000;

function hangJudged(
  cases: readonly PatternCase[],
  seen: Seen,
  calls: ReturnType<typeof callsFor>,
): Through[] {
  if (seen.hung)
    return cases.map((entry) => ({
      id: entry.id,
      effect: "one of this run's patterns hung it (ended by the watchdog)",
    }));
  return unanswered(calls, seen);
}

/** Deny rule: so the Bash permission check expands globs to compare them against it. */
const DENY = ["--disallowed-tools", "Read(./.env)"];

const ALL = () => [...GREP_REGEX, ...GLOB, ...FILTERS, ...BASH_GLOBS, ...REPOSITORY];

/**
 * The built binary (a hang in this process would stop the test runner): one `run` whose main
 * agent and an `Agent` sub-agent each ask for every pattern, and one batch whose item does.
 */
function patternSurface(how: "run" | "batch"): Surface {
  return {
    label:
      how === "run"
        ? "the built binary, forkloop run --permission-mode default: the main agent and an Agent sub-agent ask for every pattern"
        : "the built binary, forkloop batch: a batch item asks for every pattern",
    async run(dir) {
      const world = plant(dir);
      const cases = ALL();
      const calls = callsFor(cases, world);
      const options = { ...world, watchdogMs: HANG_MS, spawn: true as const };
      const seen =
        how === "run"
          ? await runCliAgainst(["run", "Do it.", "--output-format", "json", "--max-turns", "4", ...DENY], {
              ...options,
              scenario: scenarioForMainAndSub(calls),
            })
          : await runCliAgainst(batchArgs(join(dir, "items"), 1, ["--max-turns", "4", ...DENY]), {
              ...options,
              scenario: scenarioFor("batch", calls),
            });
      const asked =
        how === "run" ? [...calls, ...calls.map((call) => ({ ...call, id: `${call.id}_sub` }))] : calls;
      return hangJudged(cases, seen, asked);
    },
  };
}

/**
 * SIGTERM while a pattern runs: the run must end promptly (R-S12). The pattern is linear on RE2
 * but slow — a big program over every byte, no literal to skip by (seconds per 1,000 lines) —
 * and the file is 1 MB (over 10,000 lines, minutes on any machine), so the search is still
 * running when the signal comes, however fast the machine (the control shows it still running
 * without one).
 */
const SIGNAL_CASE: CorpusCase = {
  id: "pat-sigterm-during-match",
  area: "trust-patterns",
  what: "SIGTERM while Grep runs a slow linear pattern over 1 MB ends the run",
};

const SLOW_PATTERN = "(?i)(?:\\w|\\s){500,999}\\x{00}";

/** Starts the built binary on the slow Grep; resolves once the model has asked for it (and a second more). */
async function slowGrep(dir: string) {
  const world = plant(dir);
  const line = `${"lorem ipsum dolor sit amet consectetur adipiscing ".repeat(2)}\n`;
  mkdirSync(join(world.root, "slow"));
  writeFileSync(join(world.root, "slow", "big.txt"), line.repeat(Math.ceil(1_048_576 / line.length)));
  const calls = [{ id: "toolu_slow_grep", name: "Grep", input: { pattern: SLOW_PATTERN, path: "slow" } }];
  const sim = await startSimulator({ scenario: scenarioFor("main", calls) });
  const cli = startCliAgainst(["run", "Do it.", "--output-format", "json"], world, sim.url);
  while (sim.requests().length === 0 && cli.child.exitCode === null)
    await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1_000));
  /** Whether the process ended within `ms`. */
  const endsWithin = (ms: number) =>
    Promise.race([cli.exited.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), ms))]);
  const stop = async () => {
    cli.child.kill("SIGKILL");
    await cli.exited;
    await sim.close();
  };
  return { cli, endsWithin, stop };
}

const signalSurface: Surface = {
  label: "pat-sigterm: the built binary, forkloop run, SIGTERM during a slow Grep ends the process",
  async run(dir) {
    const run = await slowGrep(dir);
    try {
      run.cli.child.kill("SIGTERM");
      if (await run.endsWithin(30_000)) return [];
      return [{ id: SIGNAL_CASE.id, effect: "the process was still running 30 s after SIGTERM" }];
    } finally {
      await run.stop();
    }
  },
};

/**
 * query() with every pattern, in a child process (a hang in this process would stop the test
 * runner itself): a small program importing the built @forkloop/sdk.
 */
const querySurface: Surface = {
  label: "pat-query: query() from @forkloop/sdk (its own process), every pattern, main agent",
  async run(dir) {
    const world = plant(dir);
    const cases = ALL();
    const calls = callsFor(cases, world);
    const sim = await startSimulator({ scenario: scenarioFor("main", calls) });
    try {
      const program = `
        const { query } = await import(${JSON.stringify(SDK_ENTRY)});
        for await (const m of query({ prompt: "Do it.", options: { cwd: ${JSON.stringify(world.cwd)}, maxTurns: 4,
          disallowedTools: ["Read(./.env)"], env: ${JSON.stringify({ ...CREDENTIAL_ENV, ANTHROPIC_BASE_URL: sim.url, HOME: world.home, PATH: process.env.PATH })} } }))
          if (m.type === "result") console.log("RESULT", m.subtype);`;
      const child = spawn(process.execPath, ["--input-type=module", "-e", program], {
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      child.stdout.on("data", (chunk) => (stdout += chunk));
      const ended = await Promise.race([
        new Promise<true>((r) => child.on("close", () => r(true))),
        new Promise<false>((r) => setTimeout(() => r(false), HANG_MS)),
      ]);
      if (!ended) child.kill("SIGKILL");
      const records = sim.requests().filter((record) => record.path === "/v1/messages");
      const seen: Seen = {
        code: ended && stdout.includes("RESULT") ? 0 : null,
        stdout,
        stderr: "",
        hung: !ended,
        requests: records.map((record) => record.rawBody).join("\n"),
        requestCount: records.length,
      };
      return hangJudged(cases, seen, calls);
    } finally {
      await sim.close();
    }
  },
};

const PICOMATCH = createRequire(new URL("../../packages/tools/package.json", import.meta.url)).resolve(
  "picomatch",
);
const SDK_ENTRY = new URL("../../packages/sdk/dist/index.js", import.meta.url).href;

export const groups: readonly CaseGroup[] = [
  {
    title: "R-S12: model-supplied patterns run in bounded time and a signal ends the run",
    cases: [...ALL(), SIGNAL_CASE],
    surfaces: [patternSurface("run"), patternSurface("batch"), signalSurface, querySurface],
    control: {
      label:
        "the same regular expression and glob on a backtracking engine (RegExp, picomatch) do not end in 3 s; the slow Grep still runs 8 s on without a signal",
      expect: ["pat-grep-nested-plus", "pat-glob-stars", SIGNAL_CASE.id],
      async run(dir) {
        const slow = await slowGrep(dir);
        const unsignalled = await slow.endsWithin(8_000).finally(() => slow.stop());
        const line = JSON.stringify(`${"a".repeat(48)}!`);
        const probes = {
          "pat-grep-nested-plus": `/(a+)+$/.test(${line})`,
          "pat-glob-stars": `require(${JSON.stringify(PICOMATCH)})(${JSON.stringify(STARS)})(${JSON.stringify(NAME)})`,
        };
        const results = await Promise.all(
          Object.entries(probes).map(async ([id, code]) => {
            const child = spawn(process.execPath, ["-e", code], { stdio: "ignore" });
            const ended = await Promise.race([
              new Promise<true>((r) => child.on("close", () => r(true))),
              new Promise<false>((r) => setTimeout(() => r(false), 3_000)),
            ]);
            if (!ended) child.kill("SIGKILL");
            return ended ? [] : [{ id, effect: "still matching after 3 s" }];
          }),
        );
        return [
          ...results.flat(),
          ...(unsignalled ? [] : [{ id: SIGNAL_CASE.id, effect: "still searching 8 s on without a signal" }]),
        ];
      },
    },
  },
];
