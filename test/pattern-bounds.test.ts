/**
 * R-S12: patterns the model writes — Grep's regex, Glob's pattern, Grep's `glob`, LS's `ignore`,
 * the globs of a Bash command the permission check expands, and the wildcard of a Bash rule
 * matched against the model's command — run in bounded time. Each pathological shape runs in
 * its own worker thread over a real temp directory holding the hostile text and names; a worker
 * that has not answered by the deadline is killed and the case fails. Nothing here times speed:
 * the assertion is "it completed", and the controls prove the same shapes never complete on the
 * engines used before (V8's backtracking RegExp, picomatch).
 * Needs `npm run build` (the workers load the built packages).
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTasksWithDeadline } from "./support/deadline-worker.js";

const WORKER = new URL("./support/pattern-task.worker.mjs", import.meta.url);
/** Generous: a bounded case answers in well under a second; a hang never answers. */
const NO_HANG_MS = 30_000;
/** The controls only need to show the old engines still running by then. */
const CONTROL_MS = 3_000;

type Outcome = { isError: boolean; text: string };
let root: string;

const LONG_NAME = "a".repeat(200);
/** A hook matcher (Claude Code's syntax) and an MCP tool name it backtracks on in V8. */
const HOOK_MATCHER = "mcp__(a|aa)+";
const LONG_TOOL_NAME = `mcp__${"a".repeat(60)}!`;
const chain = (piece: string, count: number) => Array.from({ length: count }, () => piece).join("/");
/** A path 30 directories deep: every `**` of a chain can take any number of them. */
const DEEP_PATH = `${chain("a", 30)}/c`;
/**
 * `.gitignore` lines a repository (or a file the model writes) can hold: `**` chains, anchored
 * and not, with stars beside them, and star runs within a segment.
 */
const GITIGNORE_LINES = [
  `${chain("**/a", 12)}/**/b`,
  `a/${chain("**/a", 12)}/**/b`,
  `${chain("**/a*", 10)}/**/b`,
  `${chain("a/**", 12)}/b/`,
  `${"*a".repeat(14)}*b`,
  `${"?*".repeat(14)}b`,
  `${"[a-z]*".repeat(14)}b`,
  `!${chain("**/a", 12)}/**/b`,
];
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-pattern-bounds-")));
  const lines = [
    `${"a".repeat(5_000)}!`,
    "x".repeat(5_000),
    `${"1".repeat(5_000)}x`,
    `${" ".repeat(5_000)}x`,
    `${"ab".repeat(2_500)}!`,
  ];
  writeFileSync(join(root, "hostile.txt"), `${lines.join("\n")}\n`);
  writeFileSync(join(root, LONG_NAME), "a name of 200 a's\n");
  // A 40-deep chain a/a/…/a for the `**` chains, and a .env for the permission check's globs.
  const deep = join(root, ...Array.from({ length: 40 }, () => "a"));
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, "c"), "deep\n");
  writeFileSync(join(root, ".env"), "SECRET=1\n");
  // One directory per hostile .gitignore line, each with its own 30-deep chain a/…/a/c.
  for (const [index, line] of GITIGNORE_LINES.entries()) {
    const dir = join(root, `gitignore-${index}`);
    mkdirSync(join(dir, DEEP_PATH, ".."), { recursive: true });
    writeFileSync(join(dir, DEEP_PATH), "deep\n");
    writeFileSync(join(dir, ".gitignore"), `${line}\n`);
  }
  const fifoDir = join(root, "gitignore-fifo");
  mkdirSync(fifoDir);
  writeFileSync(join(fifoDir, "x.txt"), "deep\n");
  execFileSync("mkfifo", [join(fifoDir, ".gitignore")]);
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

type Task = Record<string, unknown>;

/** Runs the tasks in one worker; fails naming the first task that did not answer in time. */
async function allComplete(tasks: readonly Task[]): Promise<Outcome[]> {
  const outcome = await runTasksWithDeadline<Outcome>(
    WORKER,
    tasks.map((task) => ({ ...task, root })),
    NO_HANG_MS,
  );
  if (!outcome.completed)
    expect.fail(
      `did not finish within ${NO_HANG_MS} ms: ${JSON.stringify(tasks[outcome.stuckAt]).slice(0, 300)}`,
    );
  return [...outcome.results];
}

const GREP_PATTERNS = [
  "(a+)+$",
  "(a|a)*$",
  "(a|aa)+$",
  "(a*)*b",
  "(.*a){20}!!",
  "([a-z]+)+$",
  "(\\w+\\s?)+$",
  "(x+x+)+y",
  "(\\d+)+$",
  "(\\s*)*$",
  "(ab|a|b)*c",
  ".*.*.*.*.*.*.*.*.*.*=",
  "[\\s\\S]*[\\s\\S]*[\\s\\S]*[\\s\\S]*Z",
  "(?<=(?:a+)+)=",
  `[${"abcdefghij".repeat(200)}]+=`,
  `(${Array.from({ length: 500 }, (_, index) => `w${index}`).join("|")})+=`,
  `(${"a?".repeat(100)})${"a".repeat(100)}=`,
];

/** Glob shapes: star runs, `**` chains, extglob nests, brace blowups, long classes. */
const GLOBS = [
  "*a*a*a*a*a*a*a*a*a*a*a*b",
  "**/a**/a**/a**/a**/a**/a**/b",
  "**/**/**/**/**/**/**/**/**/**/b",
  "+(a|aa)b",
  "*(*(a))b",
  "@(a|a)*b",
  "+(+(a|aa)|a)b",
  "{a,b}".repeat(30),
  "{a,{a,{a,{a,{a,{a,{a,{a,b}}}}}}}}*b",
  "[a-z]*".repeat(15).concat("b"),
  "?*".repeat(12).concat("b"),
  `[${"abc".repeat(290)}]*b`,
];

const grep = (input: Task): Task => ({ kind: "tool", tool: "Grep", input });
/** Each glob through every surface that takes one from the model. */
const globSurfaces = (glob: string): Task[] => [
  { kind: "tool", tool: "Glob", input: { pattern: glob } },
  grep({ pattern: "zzz", glob }),
  { kind: "tool", tool: "LS", input: { path: ".", ignore: [glob] } },
  { kind: "bash-permission", command: `cat ${glob}`, deny: ["Read(./.env)"] },
];

describe("R-S12: model-supplied patterns finish (no hang), in worker threads with a hard kill", () => {
  it("Grep (JS backend): nested quantifiers, alternation blowups, long classes, lookbehind, in files and content mode", {
    timeout: 300_000,
  }, async () => {
    const tasks = GREP_PATTERNS.flatMap((pattern) => [
      grep({ pattern }),
      grep({ pattern, output_mode: "content" }),
    ]);
    const results = await allComplete(tasks);
    for (const [index, result] of results.entries())
      expect(result.isError, `${JSON.stringify(tasks[index])}: ${result.text}`).toBe(false);
  });

  it("Grep: multiline and -i shapes", { timeout: 300_000 }, async () => {
    const results = await allComplete([
      grep({ pattern: "(\\n|.)*Z", multiline: true }),
      grep({ pattern: "(a|\\n)+Z", multiline: true, output_mode: "content" }),
      grep({ pattern: "(A+)+$", "-i": true, output_mode: "count" }),
    ]);
    for (const result of results) expect(result.isError, result.text).toBe(false);
  });

  it("Grep: lookahead and backreferences are a tool error naming the feature, not a hang or a different result", {
    timeout: 300_000,
  }, async () => {
    const cases: [string, RegExp][] = [
      ["foo(?=bar)", /lookahead \(\?=…\)/],
      ["(?!x)a", /negative lookahead/],
      ["(a)\\1", /backreferences \(\\1…\)/],
      ["(?<n>a)\\k<n>", /named backreferences/],
    ];
    const results = await allComplete(cases.map(([pattern]) => grep({ pattern })));
    results.forEach((result, index) => {
      expect(result.isError).toBe(true);
      expect(result.text).toMatch(cases[index]?.[1] as RegExp);
      expect(result.text).toMatch(/linear-time engine/);
    });
  });

  it("globs — star runs, ** chains, extglob nests, brace blowups, long classes — in Glob, Grep's glob, LS's ignore and a Bash word", {
    timeout: 300_000,
  }, async () => {
    const tasks = GLOBS.flatMap(globSurfaces);
    const results = await allComplete(tasks);
    results.forEach((result, index) => {
      if (tasks[index]?.kind === "tool")
        expect(result.isError, `${JSON.stringify(tasks[index])}: ${result.text}`).toBe(false);
    });
  });

  it("globs too large to compile in bounded size are refused with the reason", {
    timeout: 300_000,
  }, async () => {
    const cases: [string, RegExp][] = [
      ["{1..100000}", /range of 100000 numbers; at most 1000/],
      [`${"{".repeat(100)}a,b${"}".repeat(100)}`, /nests braces or groups more than 32 deep/],
      ["x".repeat(5_000), /5000 characters long; at most 1000/],
      ["x!(a)", /negated extglob "!\(…\)"/],
    ];
    const tasks = cases.flatMap(([glob]) => globSurfaces(glob));
    const results = await allComplete(tasks);
    results.forEach((result, index) => {
      const reason = cases[Math.floor(index / 4)]?.[1] as RegExp;
      // The permission check cannot expand it, so the command is not auto-approved.
      if (tasks[index]?.kind === "bash-permission") expect(result.text).not.toMatch(/^allow/);
      else expect(result.text).toMatch(reason);
    });
  });

  it(".gitignore lines — ** chains, star runs — in Glob, Grep, LS, a Read rule's path pattern and batch --files, over a 30-deep path", {
    timeout: 300_000,
  }, async () => {
    const tasks = GITIGNORE_LINES.flatMap((line, index): Task[] => {
      const cwd = join(root, `gitignore-${index}`);
      return [
        { kind: "tool", tool: "Glob", cwd, input: { pattern: "**/*" } },
        { kind: "tool", tool: "Grep", cwd, input: { pattern: "deep" } },
        { kind: "tool", tool: "LS", cwd, input: { path: "." } },
        { kind: "read-permission", cwd, file: join(cwd, DEEP_PATH), deny: [`Read(${line})`] },
        { kind: "batch-files", cwd, glob: "**/*" },
      ];
    });
    const results = await allComplete(tasks);
    results.forEach((result, index) => {
      if (tasks[index]?.kind === "tool")
        expect(result.isError, `${JSON.stringify(tasks[index])}: ${result.text}`).toBe(false);
    });
    // Not ignored by any of these lines: the deep file is still found.
    expect(results[0]?.text).toContain("/c");
  });

  it("a .gitignore that is a FIFO counts as absent instead of hanging the walk (R-S8)", {
    timeout: 300_000,
  }, async () => {
    const cwd = join(root, "gitignore-fifo");
    const results = await allComplete([
      { kind: "tool", tool: "Glob", cwd, input: { pattern: "*.txt" } },
      { kind: "tool", tool: "Grep", cwd, input: { pattern: "deep" } },
      { kind: "tool", tool: "LS", cwd, input: { path: "." } },
      { kind: "batch-files", cwd, glob: "*.txt" },
    ]);
    for (const result of results) expect(result.text).toContain("x.txt");
  });

  it("a hook matcher with nested quantifiers against a long MCP tool name (a settings file may ship it)", async () => {
    const [result] = await allComplete([
      { kind: "hook-matcher", matcher: HOOK_MATCHER, toolName: LONG_TOOL_NAME },
    ]);
    expect(result?.text).toBe("false");
  });

  it("a Bash rule's wildcard against a long model command (a project may ship deny rules)", async () => {
    const [result] = await allComplete([
      {
        kind: "bash-permission",
        command: `echo ${"a".repeat(3_000)}`,
        deny: ["Bash(*a*a*a*a*a*a*a*a*a*a*a*b)"],
      },
    ]);
    expect(result?.text).not.toMatch(/denied by the rule/);
  });
});

describe("R-S12 controls: the same shapes on the engines used before never finish", () => {
  const neverFinishes = async (task: Task) => {
    const outcome = await runTasksWithDeadline(WORKER, [{ ...task, root }], CONTROL_MS);
    expect(outcome.completed, `the old engine finished: ${JSON.stringify(task).slice(0, 200)}`).toBe(false);
  };

  it("Grep's JS backend on V8's backtracking RegExp hangs on (a+)+$", async () => {
    await neverFinishes({ kind: "tool", tool: "Grep", engine: "backtracking", input: { pattern: "(a+)+$" } });
  });

  it("picomatch (Glob, Grep's glob, LS's ignore, Bash globs before) hangs on a star run", async () => {
    await neverFinishes({ kind: "picomatch", glob: GLOBS[0], path: LONG_NAME });
  });

  it("the ignore package (.gitignore and Read rules before) hangs on a ** chain over the deep path", async () => {
    // Ten levels deeper than DEEP_PATH: at 30 the old engine's blow-up is near the deadline on an
    // idle machine, and a control must fail by far.
    await neverFinishes({
      kind: "ignore-package",
      gitignore: GITIGNORE_LINES[0],
      path: `${chain("a", 40)}/c`,
    });
  });

  it("RegExp (hook matchers before) hangs on the long tool name", async () => {
    await neverFinishes({ kind: "regexp", source: `^(?:${HOOK_MATCHER})$`, flags: "", text: LONG_TOOL_NAME });
  });

  it("RegExp (the Bash rule wildcard before) hangs on the long command", async () => {
    await neverFinishes({
      kind: "regexp",
      source: "^.*a.*a.*a.*a.*a.*a.*a.*a.*a.*a.*a.*b$",
      flags: "s",
      text: `echo ${"a".repeat(3_000)}`,
    });
  });
});
