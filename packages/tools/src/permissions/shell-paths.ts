import { lstatSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import { expandGlobSync } from "../patterns/glob-scope.js";
import { compileGlob } from "../patterns/linear-glob.js";
import type { ShellCommand } from "../shell/analyze-shell.js";
import { gitConfigProblem } from "../shell/git-config-check.js";
import { programName } from "../shell/program-name.js";
import { type PathRead, type RecursiveRead, readOnlyVerdict } from "../shell/read-only-commands.js";
import { literalValue, type ShellWord } from "../shell/shell-word.js";
import {
  isInside,
  type ResolvedPath,
  realpathAllowingMissing,
  realWorkspaceRoots,
  resolveInWorkspace,
} from "../workspace-paths.js";
import type { BashJudgementContext } from "./bash-judgement.js";
import { outsideInodeBelow } from "./links-below.js";
import { permissionModeFacts } from "./permission-modes.js";
import { type PermissionRule, type RuleMatchContext, ruleMatches } from "./permission-rules.js";
import { protectedWriteReason, protectedWriteTarget } from "./protected-paths.js";

/** Devices every shell redirects to without changing anything. */
const HARMLESS_WRITE_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]);
/** More files than this from one glob are not checked one by one: the command then needs approval. */
const MAX_GLOB_MATCHES = 500;
/** A glob that would look at more entries than this is not expanded: the command then needs approval. */
const MAX_GLOB_VISITED = 20_000;

/**
 * Where the words of a shell command point on the file system (R-S3, R-S4): relative paths
 * resolve from every directory a `cd` may have moved to (a subshell's `cd` may or may not
 * apply later, so all are kept), globs are expanded as bash would (dot files included, so `cat *`
 * is judged by `.env` too), and reads and writes are checked like the Read and Write tools.
 */
export class ShellPaths {
  private cwds: Set<string>;
  private cwdUnknown = false;
  private readonly pathDenyRules: readonly PermissionRule[];
  /** Per-judgement memo: a long command runs `git` many times in the same repository. */
  private readonly memo = new Map<string, string | undefined>();
  /** Per-judgement memo of whole simple commands (oncePerPart). */
  private readonly parts = new Map<string, unknown>();
  private readonly resolvedPaths = new Map<string, ResolvedPath>();
  private readonly realPaths = new Map<string, ResolvedPath>();
  /** The rule context with realpath memoized for this command: every word is matched against every path rule. */
  private readonly ruleContext: RuleMatchContext;

  private readonly realRoots: readonly string[];

  constructor(private readonly context: BashJudgementContext) {
    this.cwds = new Set([context.match.cwd]);
    this.realRoots = realWorkspaceRoots(context.workspaceRoots);
    this.ruleContext = {
      ...context.match,
      realPath: (path) => {
        let real = this.realPaths.get(path);
        if (real === undefined) {
          real = realpathAllowingMissing(path);
          this.realPaths.set(path, real);
        }
        return real;
      },
    };
    this.pathDenyRules = context.rules.deny.filter((rule) => rule.specifier?.type === "path");
  }

  /** resolveInWorkspace, once per path for this command (it resolves the path and every root). */
  private inWorkspace(path: string): ResolvedPath {
    let resolved = this.resolvedPaths.get(path);
    if (resolved === undefined) {
      resolved = resolveInWorkspace(path, {
        cwd: this.context.match.cwd,
        workspaceRoots: this.context.workspaceRoots,
      });
      this.resolvedPaths.set(path, resolved);
    }
    return resolved;
  }

  /** `compute()` once per key for this command. */
  once(key: string, compute: () => string | undefined): string | undefined {
    if (!this.memo.has(key)) this.memo.set(key, compute());
    return this.memo.get(key);
  }

  /** Every directory relative paths may resolve from; undefined after `cd $X`. */
  possibleCwds(): string[] | undefined {
    return this.cwdUnknown ? undefined : [...this.cwds];
  }

  /** Follows `cd DIR` (and `pushd`/`popd`, which make the directory unknown). */
  noteDirectoryChange(part: ShellCommand): void {
    const name = programName(part.words[0]);
    if (name === "pushd" || name === "popd") this.cwdUnknown = true;
    if (name !== "cd") return;
    const operands = part.words
      .slice(1)
      .filter((word) => literalValue(word) !== "-L" && literalValue(word) !== "-P");
    const target = operands[0];
    if (target === undefined) {
      this.cwds.add(this.context.match.home);
      return;
    }
    const resolved = this.resolveWord(target);
    if (resolved === undefined || operands.length > 1 || literalValue(target) === "-") this.cwdUnknown = true;
    else for (const path of resolved) this.cwds.add(path);
  }

  /**
   * Why the repository config git would read for this command may make it run a program
   * (`core.fsmonitor`, `diff.external`, textconv and filter drivers, `core.hooksPath` …, see
   * git-config-check), or undefined. Checked for read-only git and for git an allow rule covers:
   * `Bash(git status:*)` approves `git status`, not whatever the repository's config runs (R-S2).
   * Each repository is read once per judgement.
   */
  gitRepositoryProblem(part: ShellCommand): string | undefined {
    let cwds = this.possibleCwds();
    const args = part.words.slice(1);
    for (let index = 0; index < args.length; index++) {
      const value = literalValue(args[index]);
      if (value === undefined || !value.startsWith("-")) break;
      if (value === "-C") {
        const dir = args[++index];
        const target = dir === undefined ? undefined : literalValue(dir);
        if (target === undefined || cwds === undefined)
          return "git -C names a directory only known at run time";
        cwds = cwds.map((cwd) => resolve(cwd, target));
      } else if (/^--(git-dir|work-tree)(=|$)/.test(value)) {
        return `git ${value.split("=")[0]}: a repository named on the command line is not checked`;
      } else if (value === "-c") {
        index++;
      }
    }
    if (cwds === undefined) return "git runs in a directory only known at run time";
    for (const cwd of cwds) {
      const problem = this.once(`git:${cwd}`, () => gitConfigProblem(cwd));
      if (problem !== undefined) return problem;
    }
    return undefined;
  }

  /** `cd DIR` is read-only when DIR is inside the workspace. */
  changeDirectory(target: ShellWord | "home"): string | undefined {
    if (target === "home") return "cd leaves the workspace for the home directory";
    for (const path of this.resolveWord(target) ?? []) {
      const inside = this.inWorkspace(path);
      if (!inside.ok) return `cd ${target.text} leaves the workspace`;
    }
    return this.resolveWord(target) === undefined
      ? `cd ${target.text}: a directory only known at run time`
      : undefined;
  }

  /** Absolute candidates for a literal word, or undefined when it (or the directory) is only known at run time. */
  resolveWord(word: ShellWord): string[] | undefined {
    if (word.kind !== "literal") return undefined;
    const value = word.value;
    if (word.home === true) return [join(this.context.match.home, value.slice(1))];
    if (isAbsolute(value)) return [resolve(value)];
    const cwds = this.possibleCwds();
    return cwds?.map((cwd) => resolve(cwd, value));
  }

  /** Globs replaced by the files they match now (bash expands them when it runs); brace expansion is not followed. */
  expandPatterns(words: readonly ShellWord[]): ShellWord[] | string {
    const expanded: ShellWord[] = [];
    for (const word of words) {
      if (word.kind !== "pattern") {
        expanded.push(word);
        continue;
      }
      const matches = this.globMatches(word);
      if (typeof matches === "string") return matches;
      if (matches.length === 0) expanded.push({ kind: "literal", text: word.text, value: word.text });
      for (const match of matches) expanded.push({ kind: "literal", text: match, value: match });
    }
    return expanded;
  }

  private globMatches(word: Extract<ShellWord, { kind: "pattern" }>): string[] | string {
    if (word.text.includes("{")) return `brace expansion in ${word.text} is not followed`;
    if (word.home === true || /(^|\/)\.\.(\/|$)/.test(word.pattern))
      return `the glob ${word.text} reaches outside the directory`;
    const cwds = this.possibleCwds();
    if (cwds === undefined) return `the glob ${word.text} expands in a directory only known at run time`;
    const absolute = word.pattern.startsWith("/");
    const pattern = absolute ? word.pattern.slice(1) : word.pattern;
    // Matched on RE2, in linear time: the model writes these words (R-S12).
    const compiled = compileGlob(pattern);
    if (!compiled.ok) return `the glob ${word.text} cannot be checked (${compiled.error})`;
    const matches = new Set<string>();
    for (const cwd of absolute ? ["/"] : cwds) {
      const found = expandGlobSync(cwd, pattern, compiled.glob, {
        maxVisited: MAX_GLOB_VISITED,
        maxMatches: MAX_GLOB_MATCHES,
      });
      if (!found.ok) return found.error;
      for (const path of found.paths)
        matches.add(absolute ? path : relative(this.context.match.cwd, path) || ".");
      if (matches.size > MAX_GLOB_MATCHES)
        return `the glob ${word.text} matches more than ${MAX_GLOB_MATCHES} files`;
    }
    return [...matches].sort();
  }

  /** Why reading this path is not an auto-approved read (outside the workspace, a hard link, below a denied path). */
  readProblem(read: PathRead): string | undefined {
    const candidates = this.resolveWord(read.word);
    if (candidates === undefined) return `it reads ${read.word.text}, a path only known at run time`;
    for (const path of candidates) {
      const inside = this.inWorkspace(path);
      if (!inside.ok) return `it reads ${read.word.text} outside the workspace (${inside.error})`;
      const links = hardLinkCount(inside.path);
      if (links > 1) {
        return `${inside.path} has ${links} hard links: it may be a file outside the workspace`;
      }
      if (read.recursive !== false) {
        const problem = this.recursiveReadProblem(read.word) ?? this.linksBelow(inside.path, read.recursive);
        if (problem !== undefined) return problem;
      }
    }
    return undefined;
  }

  /**
   * A recursive read of file contents below `dir` that may reach an outside inode: a hard link, or
   * (for `diff -r`) a symlink out (R-S4). Names-only reads (`ls -R`, `find`) print no contents.
   * Each directory is walked once per judgement.
   */
  private linksBelow(dir: string, below: RecursiveRead): string | undefined {
    if (below === "names") return undefined;
    return this.once(`links:${below}:${dir}`, () =>
      outsideInodeBelow(dir, {
        throughSymlinks: below === "contents-through-links",
        inside: (real) => this.realRoots.some((root) => isInside(real, root)),
      }),
    );
  }

  /** A recursive read (`grep -r`, `rg`) of a directory where a path deny rule may protect a file. */
  private recursiveReadProblem(word: ShellWord): string | undefined {
    for (const path of this.resolveWord(word) ?? []) {
      const real = this.inWorkspace(path);
      const dir = real.ok ? real.path : path;
      const rule = this.pathDenyRules.find((candidate) => this.mayCoverBelow(candidate, dir));
      if (rule !== undefined)
        return `it reads everything below ${word.text}, where the rule deny: ${rule.raw} may protect a file`;
    }
    return undefined;
  }

  /** Whether writing this redirect target changes a file, and why it needs approval if it does. */
  writeProblem(word: ShellWord): { readonly mutates: boolean; readonly approval?: string } {
    const value = literalValue(word);
    if (value !== undefined && (HARMLESS_WRITE_TARGETS.has(value) || /^\/dev\/fd\/\d+$/.test(value)))
      return { mutates: false };
    const candidates = this.resolveWord(word);
    if (candidates === undefined)
      return { mutates: true, approval: `it writes ${word.text}, a path only known at run time` };
    for (const path of candidates) {
      const inside = this.inWorkspace(path);
      if (!inside.ok)
        return { mutates: true, approval: `it writes ${word.text} outside the workspace (${inside.error})` };
      const links = hardLinkCount(inside.path);
      if (links > 1)
        return {
          mutates: true,
          approval: `it writes ${inside.path}, which has ${links} hard links (the other may be outside the workspace)`,
        };
      const guarded = protectedWriteTarget(inside.path, {
        cwd: this.context.match.cwd,
        workspaceRoots: this.context.workspaceRoots,
        home: this.context.match.home,
      });
      const allowed =
        (permissionModeFacts(this.context.mode).approvesEdits && guarded === undefined) ||
        this.context.rules.allow.some(
          (rule) =>
            (guarded === undefined || rule.specifier?.type === "path") &&
            ruleMatches(rule, "Write", { file_path: inside.path }, "allow", this.ruleContext),
        );
      if (!allowed)
        return {
          mutates: true,
          approval:
            guarded === undefined
              ? `it writes ${word.text}`
              : `it writes ${protectedWriteReason(word.text, guarded)}`,
        };
    }
    return { mutates: true };
  }

  /**
   * Path deny rules against every path the parser sees (R-S3): a read a read-only command makes or a
   * `< file` of a denied file, and a `> file` to an Edit-denied file, are denied; any other word
   * naming a denied path (`cp .env x`, `node run.js .env`) needs a person's answer in every mode.
   */
  deniedByPathRule(commands: readonly ShellCommand[]): {
    readonly denied?: string;
    readonly unverifiable?: string;
  } {
    if (this.pathDenyRules.length === 0) return {};
    let unverifiable: string | undefined;
    for (const part of commands) {
      const found = this.oncePerPart("deny", part, () => this.partDeniedByPathRule(part));
      if (found.denied !== undefined) return found;
      unverifiable ??= found.unverifiable;
      this.noteDirectoryChange(part);
    }
    this.cwds = new Set([this.context.match.cwd]);
    this.cwdUnknown = false;
    return unverifiable === undefined ? {} : { unverifiable };
  }

  private partDeniedByPathRule(part: ShellCommand): {
    readonly denied?: string;
    readonly unverifiable?: string;
  } {
    for (const redirect of part.redirects) {
      const rule = this.deniedBy(redirect.target, redirect.access === "read" ? "Read" : "Write");
      if (rule !== undefined) return { denied: rule.raw };
    }
    let unverifiable: string | undefined;
    const name = programName(part.words[0]);
    if (!part.wraps && name !== undefined) {
      const args = this.expandPatterns(part.words.slice(1));
      const verdict = typeof args === "string" ? undefined : readOnlyVerdict(name, args);
      for (const read of verdict?.readOnly === true ? verdict.reads : []) {
        const rule = this.deniedBy(read.word, "Read");
        if (rule !== undefined) return { denied: rule.raw };
        if (read.recursive) unverifiable ??= this.recursiveReadProblem(read.word);
      }
    }
    for (const word of part.words.slice(1)) {
      const rule = this.deniedBy(word, "Read") ?? this.deniedBy(word, "Write");
      if (rule !== undefined)
        unverifiable ??= `${word.text} names a file the rule deny: ${rule.raw} protects`;
    }
    return unverifiable === undefined ? {} : { unverifiable };
  }

  /**
   * `compute()` once per simple command of this judgement (R-S1: a compound command judges each
   * distinct part once). The key is the part as written plus where relative paths resolve now, the
   * only state its judgement depends on; `npm test && npm test` is judged once.
   */
  oncePerPart<T>(purpose: string, part: ShellCommand, compute: () => T): T {
    const key = `${purpose}\u0000${partKey(part)}\u0000${this.cwdUnknown ? "?" : [...this.cwds].sort().join("\u0000")}`;
    if (this.parts.has(key)) return this.parts.get(key) as T;
    const value = compute();
    this.parts.set(key, value);
    return value;
  }

  /** The first path deny rule covering what a word names (also `--file=X` and `rev:X`), for reads or writes. */
  private deniedBy(word: ShellWord, access: "Read" | "Write"): PermissionRule | undefined {
    const paths: string[] = [];
    if (word.kind === "pattern") {
      const matches = this.globMatches(word);
      if (typeof matches !== "string")
        paths.push(
          ...matches.flatMap(
            (match) => this.resolveWord({ kind: "literal", text: match, value: match }) ?? [],
          ),
        );
    } else if (word.kind === "literal") {
      const values = new Set([word.value]);
      const equals = word.value.indexOf("=");
      if (equals !== -1) values.add(word.value.slice(equals + 1));
      const colon = word.value.lastIndexOf(":");
      if (colon !== -1) values.add(word.value.slice(colon + 1));
      for (const value of values) {
        if (value.length === 0) continue;
        paths.push(...(this.resolveWord({ ...word, value }) ?? []));
      }
    }
    const compiled = word.kind === "pattern" ? compileGlob(word.pattern) : undefined;
    // A glob that cannot be compiled might name anything: it counts as naming the rule's file.
    const matcher =
      compiled === undefined ? undefined : (path: string) => !compiled.ok || compiled.glob.matches(path);
    return this.pathDenyRules.find(
      (rule) =>
        paths.some((path) => ruleMatches(rule, access, { file_path: path }, "deny", this.ruleContext)) ||
        (matcher !== undefined &&
          this.literalRuleTargets(rule).some((target) => matcher(relative(this.context.match.cwd, target)))),
    );
  }

  /** The one file a rule without wildcards names (`./.env` → <root>/.env), for matching globs against it. */
  private literalRuleTargets(rule: PermissionRule): string[] {
    const pattern = rule.specifier?.type === "path" ? rule.specifier.pattern : "";
    if (/[*?[\]{}!]/.test(pattern)) return [];
    const { root, body } = ruleAnchor(pattern, this.context.match);
    return body.includes("/") || pattern.startsWith("./") || pattern.startsWith("/")
      ? [join(root, body)]
      : [];
  }

  /** Whether a path rule could match something at or below `dir`: anchored rules by their fixed prefix, others anywhere. */
  private mayCoverBelow(rule: PermissionRule, dir: string): boolean {
    const pattern = rule.specifier?.type === "path" ? rule.specifier.pattern : "";
    const { root, body, anchored } = ruleAnchor(pattern, this.context.match);
    if (!anchored) return isInside(dir, root) || isInside(root, dir);
    const fixed = body.split("/").findIndex((segment) => /[*?[\]{}!]/.test(segment));
    const prefix = join(root, ...(fixed === -1 ? body.split("/") : body.split("/").slice(0, fixed)));
    return isInside(prefix, dir) || isInside(dir, prefix);
  }
}

/** A simple command as written: equal keys are the same words, assignments and redirections. */
function partKey(part: ShellCommand): string {
  const words = part.words.map((word) => `${word.kind}:${word.text}`).join("\u0001");
  const redirects = part.redirects.map(
    (redirect) => `${redirect.access}:${redirect.target.kind}:${redirect.target.text}`,
  );
  return [
    words,
    part.assignments.join("\u0001"),
    redirects.join("\u0001"),
    part.wraps,
    part.extraArguments,
  ].join("\u0002");
}

/** How permission-rules anchors a path pattern (`//abs`, `~/x`, `/x`, `./x`, `x`). */
function ruleAnchor(
  pattern: string,
  context: { cwd: string; home: string },
): { root: string; body: string; anchored: boolean } {
  if (pattern.startsWith("//")) return { root: "/", body: pattern.slice(2), anchored: true };
  if (pattern.startsWith("~/")) return { root: context.home, body: pattern.slice(2), anchored: true };
  if (pattern.startsWith("/")) return { root: context.cwd, body: pattern.slice(1), anchored: true };
  if (pattern.startsWith("./")) return { root: context.cwd, body: pattern.slice(2), anchored: true };
  // gitignore: a pattern with a slash in the middle is anchored, one without matches at any depth.
  const trimmed = pattern.replace(/\/$/, "");
  return { root: context.cwd, body: trimmed, anchored: trimmed.includes("/") };
}

/** Links of a regular file (a directory's count is its subdirectories, not hard links). */
export function hardLinkCount(path: string): number {
  try {
    const stats = lstatSync(path);
    if (!stats.isFile()) return statSync(path).isFile() ? statSync(path).nlink : 1;
    return stats.nlink;
  } catch {
    return 1;
  }
}
