import { basename, dirname, join, relative, sep } from "node:path";
import { type LinearIgnore, linearIgnore } from "./patterns/linear-gitignore.js";
import { CONFIG_FILE_MAX_BYTES, readProjectFile } from "./project-files/read-project-file.js";
import { isInside } from "./workspace-paths.js";

/**
 * `.gitignore` rules as git applies them: every directory may hold a `.gitignore` whose patterns
 * are relative to it, deeper files override shallower ones (negations included), and nothing
 * below an ignored directory can be re-included. `.git` itself is always ignored. Used by Glob,
 * Grep's JavaScript backend and LS so all three hide the same files ripgrep would (R-T3).
 * The lines come from the repository: they run on the linear-time engine (R-S12), and a
 * `.gitignore` is read as a project file (R-S8) — a FIFO, a device, a link out of the workspace
 * or one over 1 MiB counts as absent instead of hanging the walk.
 */
export class GitignoreFilter {
  private readonly rulesByDir = new Map<string, LinearIgnore | null>();
  private readonly ignoredDirs = new Map<string, boolean>();
  /** forDirectory's checkers, so the files of one directory share its rule chain. */
  private readonly checkersByDir = new Map<string, (name: string, isDirectory: boolean) => boolean>();

  /** @param base the topmost directory whose `.gitignore` applies (a workspace root). */
  constructor(private readonly base: string) {}

  /** The filter for a search under `searchRoot`, based at the workspace root that contains it. */
  static forSearch(searchRoot: string, workspaceRoots: readonly string[]): GitignoreFilter {
    const containing = workspaceRoots
      .filter((root) => isInside(searchRoot, root))
      .sort((left, right) => right.length - left.length)[0];
    return new GitignoreFilter(containing ?? searchRoot);
  }

  /** True when `path` (absolute) is ignored by a `.gitignore` between the base and its parent. */
  isIgnored(path: string, isDirectory: boolean): boolean {
    if (!isInside(path, this.base) || path === this.base) return false;
    const parent = dirname(path);
    if (parent !== this.base && this.isIgnoredDirectory(parent)) return true;
    return this.matchesOwnRules(path, isDirectory);
  }

  /**
   * A checker for the entries of one directory (which must not itself be ignored): the rule
   * chain from the base down to `dir` is computed once, so a walk pays per entry only the
   * pattern tests, not path arithmetic.
   */
  forDirectory(dir: string): (name: string, isDirectory: boolean) => boolean {
    if (!isInside(dir, this.base)) return () => false;
    const relativeDir = relative(this.base, dir);
    const segments = relativeDir === "" ? [] : relativeDir.split(sep);
    const chain: { rules: LinearIgnore; prefix: string }[] = [];
    let ruleDir = this.base;
    for (let depth = 0; depth <= segments.length; depth++) {
      const rules = this.rulesFor(ruleDir);
      if (rules !== null) {
        const below = segments.slice(depth).join("/");
        chain.push({ rules, prefix: below === "" ? "" : `${below}/` });
      }
      const next = segments[depth];
      if (next !== undefined) ruleDir = join(ruleDir, next);
    }
    return (name, isDirectory) => {
      if (name === ".git") return true;
      let ignored = false;
      for (const { rules, prefix } of chain) {
        const verdict = rules.test(`${prefix}${name}${isDirectory ? "/" : ""}`);
        if (verdict.ignored) ignored = true;
        else if (verdict.unignored) ignored = false;
      }
      return ignored;
    };
  }

  private isIgnoredDirectory(dir: string): boolean {
    const known = this.ignoredDirs.get(dir);
    if (known !== undefined) return known;
    const ignored = this.isIgnored(dir, true);
    this.ignoredDirs.set(dir, ignored);
    return ignored;
  }

  /** The rules of every `.gitignore` from the base down to the parent; a deeper one has the last word. */
  private matchesOwnRules(path: string, isDirectory: boolean): boolean {
    const parent = dirname(path);
    let check = this.checkersByDir.get(parent);
    if (check === undefined) {
      check = this.forDirectory(parent);
      this.checkersByDir.set(parent, check);
    }
    return check(basename(path), isDirectory);
  }

  private rulesFor(dir: string): LinearIgnore | null {
    const cached = this.rulesByDir.get(dir);
    if (cached !== undefined) return cached;
    const read = readProjectFile(join(dir, ".gitignore"), {
      roots: [this.base],
      maxBytes: CONFIG_FILE_MAX_BYTES,
      singleLink: false,
      what: ".gitignore",
    });
    // No .gitignore here is the common case; a refused one hides nothing.
    const rules = read.status === "read" ? linearIgnore().add(read.text) : null;
    this.rulesByDir.set(dir, rules);
    return rules;
  }
}
