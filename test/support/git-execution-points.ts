import { type ExecFileSyncOptions, execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Every place git starts a program that a repository (its config, hooks, attributes, a gitfile
 * or a submodule) can name — from git-config(1), githooks(5) and gitattributes(5) — each planted
 * in a real repository, with the git command that runs it when nothing stops it (the control).
 * R-S7 tests assert forkloop's own git never runs any of them.
 */
export interface GitExecutionPoint {
  /** As the git documentation names it. */
  readonly name: string;
  /** Plants the point in `repo` (a repository with `a.txt` committed on `main`); the program is `repo.mark`. */
  readonly plant: (repo: TestRepo) => void;
  /** Plain git doing what makes git run the planted program. */
  readonly control: (repo: TestRepo) => void;
  /** Where a session starts (default: the work tree). */
  readonly sessionCwd?: (repo: TestRepo) => string;
}

export interface TestRepo {
  /** A directory of this point's own, holding the repository and whatever else it needs. */
  readonly root: string;
  /** The work tree. */
  readonly dir: string;
  /** A program that records it ran (creates `marker`), then exits 0. */
  readonly mark: string;
  readonly marker: string;
  /** Plain git in `dir` (or `cwd`), with the test's environment minus anything git-specific. */
  git(args: readonly string[], options?: { cwd?: string; input?: string; env?: NodeJS.ProcessEnv }): string;
  /** `a.txt` with an mtime its index entry does not have: git must compare its content (filters, index refresh). */
  touchStatDirty(path?: string): void;
  write(path: string, text: string): void;
  /** A file of this point's own outside the repository (included configs, attribute files). */
  file(name: string, text: string): string;
}

/** The environment plain git gets in these tests: no GIT_* from the runner, no global config, no prompts. */
export function plainGitEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("GIT_") && !["EDITOR", "VISUAL", "PAGER"].includes(name)) env[name] = value;
  }
  return {
    ...env,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "t",
    GIT_AUTHOR_EMAIL: "t@example.com",
    GIT_COMMITTER_NAME: "t",
    GIT_COMMITTER_EMAIL: "t@example.com",
    ...extra,
  };
}

/** A repository in `root` with `a.txt` committed on `main`, and the marking program. */
export function createTestRepo(root: string): TestRepo {
  mkdirSync(root, { recursive: true });
  const dir = join(root, "repo");
  const marker = join(root, "MARKED");
  const mark = join(root, "mark");
  writeFileSync(mark, `#!/bin/sh\ntouch '${marker}'\nexit 0\n`);
  chmodSync(mark, 0o755);
  const git: TestRepo["git"] = (args, options = {}) => {
    const run: ExecFileSyncOptions = {
      cwd: options.cwd ?? dir,
      env: plainGitEnv(options.env),
      input: options.input ?? "",
      stdio: ["pipe", "pipe", "pipe"],
      timeout: 20_000,
    };
    try {
      return execFileSync("git", [...args], run).toString();
    } catch (error) {
      // Many controls fail after starting the program (a fetch from nowhere): the marker says enough.
      return String((error as { stdout?: Buffer }).stdout ?? "");
    }
  };
  mkdirSync(dir);
  git(["init", "-q", "-b", "main"]);
  writeFileSync(join(dir, "a.txt"), "hello\n");
  git(["add", "a.txt"]);
  git(["commit", "-q", "-m", "first"]);
  return {
    root,
    dir,
    mark,
    marker,
    git,
    touchStatDirty: (path = join(dir, "a.txt")) =>
      utimesSync(path, new Date(2001, 0, 1), new Date(2001, 0, 1)),
    write: (path, text) => {
      mkdirSync(join(path, ".."), { recursive: true });
      writeFileSync(path, text);
    },
    file: (name, text) => {
      const path = join(root, name);
      writeFileSync(path, text);
      return path;
    },
  };
}

export function marked(repo: TestRepo): boolean {
  return existsSync(repo.marker);
}

export function clearMark(repo: TestRepo): void {
  rmSync(repo.marker, { force: true });
}

const config = (repo: TestRepo, key: string, value: string) => repo.git(["config", key, value]);
const hook = (repo: TestRepo, name: string, dir = join(repo.dir, ".git", "hooks")) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, name), `#!/bin/sh\nexec '${repo.mark}'\n`);
  chmodSync(join(dir, name), 0o755);
};
const status = (repo: TestRepo) => repo.git(["status"]);
const diff = (repo: TestRepo) => repo.git(["diff"]);
/** Git starts a pager only for a terminal: `script` gives it one. */
const onTerminal = (repo: TestRepo, command: string) => {
  try {
    execFileSync("script", ["-qec", command, "/dev/null"], {
      cwd: repo.dir,
      env: plainGitEnv(),
      stdio: "ignore",
    });
  } catch {
    // The marking "pager" reads nothing, so git may die of SIGPIPE after starting it.
  }
};
/** A commit on HEAD whose header carries a signature of `kind`: `log.showSignature` makes git verify it. */
function signHead(repo: TestRepo, kind: "PGP" | "SSH"): void {
  const commit = repo.git(["cat-file", "commit", "HEAD"]);
  const signature = ` -----BEGIN ${kind} SIGNATURE-----\n x\n -----END ${kind} SIGNATURE-----`;
  const signed = commit.replace(/^(committer .*)$/m, `$1\ngpgsig${signature}`);
  const oid = repo.git(["hash-object", "-t", "commit", "-w", "--stdin"], { input: signed }).trim();
  repo.git(["update-ref", "HEAD", oid]);
}
const credentialFill = (repo: TestRepo) =>
  repo.git(["credential", "fill"], { input: "protocol=https\nhost=example.invalid\n\n" });
/** A second commit on a branch `other` that changes a.txt, and one on main that does too. */
function divergingBranches(repo: TestRepo): void {
  repo.git(["checkout", "-q", "-b", "other"]);
  repo.write(join(repo.dir, "a.txt"), "hello\nfrom other\n");
  repo.git(["commit", "-q", "-am", "other"]);
  repo.git(["checkout", "-q", "main"]);
  repo.write(join(repo.dir, "a.txt"), "hello\nfrom main\n");
  repo.git(["commit", "-q", "-am", "main"]);
}
/** Pushes from a clone of the repository into it (the receiving side runs its own programs). */
function pushInto(repo: TestRepo): void {
  const clone = join(repo.root, "clone");
  if (!existsSync(clone)) repo.git(["clone", "-q", repo.dir, clone], { cwd: repo.root });
  repo.git(["commit", "-q", "--allow-empty", "-m", "pushed"], { cwd: clone });
  repo.git(["push", "-q", "origin", "HEAD:refs/heads/pushed"], { cwd: clone });
}
const filterAttributes = (repo: TestRepo) =>
  repo.write(join(repo.dir, ".gitattributes"), "a.txt filter=evil\n");

export const GIT_EXECUTION_POINTS: readonly GitExecutionPoint[] = [
  {
    name: "core.fsmonitor",
    plant: (repo) => config(repo, "core.fsmonitor", repo.mark),
    control: status,
  },
  {
    name: "hook post-index-change (.git/hooks)",
    plant: (repo) => {
      hook(repo, "post-index-change");
      repo.touchStatDirty();
    },
    control: status,
  },
  {
    name: "core.hooksPath (post-index-change)",
    plant: (repo) => {
      const dir = join(repo.root, "hooks");
      hook(repo, "post-index-change", dir);
      config(repo, "core.hooksPath", dir);
      repo.touchStatDirty();
    },
    control: status,
  },
  {
    name: "filter.<driver>.clean (.gitattributes)",
    plant: (repo) => {
      filterAttributes(repo);
      config(repo, "filter.evil.clean", repo.mark);
      repo.touchStatDirty();
    },
    control: status,
  },
  {
    name: "filter.<driver>.process (.gitattributes)",
    plant: (repo) => {
      filterAttributes(repo);
      config(repo, "filter.evil.process", repo.mark);
      repo.touchStatDirty();
    },
    control: status,
  },
  {
    name: "filter.<driver>.clean ($GIT_DIR/info/attributes)",
    plant: (repo) => {
      repo.write(join(repo.dir, ".git", "info", "attributes"), "a.txt filter=evil\n");
      config(repo, "filter.evil.clean", repo.mark);
      repo.touchStatDirty();
    },
    control: status,
  },
  {
    name: "filter.<driver>.clean (core.attributesFile)",
    plant: (repo) => {
      config(repo, "core.attributesFile", repo.file("attributes", "a.txt filter=evil\n"));
      config(repo, "filter.evil.clean", repo.mark);
      repo.touchStatDirty();
    },
    control: status,
  },
  {
    name: "filter.<driver>.smudge",
    plant: (repo) => {
      filterAttributes(repo);
      config(repo, "filter.evil.smudge", repo.mark);
      rmSync(join(repo.dir, "a.txt"));
    },
    control: (repo) => repo.git(["checkout", "--", "a.txt"]),
  },
  {
    name: "include.path",
    plant: (repo) => {
      repo.file("evil.conf", `[core]\n\tfsmonitor = ${repo.mark}\n`);
      config(repo, "include.path", "../../evil.conf");
    },
    control: status,
  },
  {
    name: "includeIf.<condition>.path",
    plant: (repo) => {
      const included = repo.file("evil.conf", `[core]\n\tfsmonitor = ${repo.mark}\n`);
      config(repo, `includeIf.gitdir:${repo.root}/**.path`, included);
    },
    control: status,
  },
  {
    name: "diff.external",
    plant: (repo) => {
      config(repo, "diff.external", repo.mark);
      repo.write(join(repo.dir, "a.txt"), "changed\n");
    },
    control: diff,
  },
  {
    name: "diff.<driver>.textconv",
    plant: (repo) => {
      repo.write(join(repo.dir, ".gitattributes"), "a.txt diff=evil\n");
      config(repo, "diff.evil.textconv", repo.mark);
      repo.write(join(repo.dir, "a.txt"), "changed\n");
    },
    control: diff,
  },
  {
    name: "diff.<driver>.command",
    plant: (repo) => {
      repo.write(join(repo.dir, ".gitattributes"), "a.txt diff=evil\n");
      config(repo, "diff.evil.command", repo.mark);
      repo.write(join(repo.dir, "a.txt"), "changed\n");
    },
    control: diff,
  },
  {
    name: "core.pager",
    plant: (repo) => config(repo, "core.pager", repo.mark),
    control: (repo) => onTerminal(repo, "git log"),
  },
  {
    name: "pager.<command>",
    plant: (repo) => config(repo, "pager.status", repo.mark),
    control: (repo) => onTerminal(repo, "git status"),
  },
  {
    name: "core.editor",
    plant: (repo) => config(repo, "core.editor", repo.mark),
    control: (repo) => repo.git(["commit", "-q", "--allow-empty"]),
  },
  {
    name: "sequence.editor",
    plant: (repo) => {
      repo.git(["commit", "-q", "--allow-empty", "-m", "second"]);
      config(repo, "sequence.editor", repo.mark);
    },
    control: (repo) => repo.git(["rebase", "-q", "-i", "HEAD~1"]),
  },
  {
    name: "gpg.program (log.showSignature)",
    plant: (repo) => {
      signHead(repo, "PGP");
      config(repo, "log.showSignature", "true");
      config(repo, "gpg.program", repo.mark);
    },
    // What forkloop's prefetch used to run.
    control: (repo) => repo.git(["log", "--oneline", "-n", "5"]),
  },
  {
    name: "gpg.ssh.program (gpg.format ssh)",
    plant: (repo) => {
      signHead(repo, "SSH");
      config(repo, "log.showSignature", "true");
      config(repo, "gpg.format", "ssh");
      config(repo, "gpg.ssh.program", repo.mark);
      config(
        repo,
        "gpg.ssh.allowedSignersFile",
        repo.file("allowed-signers", "t@example.com ssh-ed25519 AAAA\n"),
      );
    },
    control: (repo) => repo.git(["log", "--oneline", "-n", "5"]),
  },
  {
    name: "core.sshCommand",
    plant: (repo) => {
      config(repo, "core.sshCommand", repo.mark);
      repo.git(["remote", "add", "origin", "ssh://example.invalid/x"]);
    },
    control: (repo) => repo.git(["fetch", "-q", "origin"]),
  },
  {
    name: "core.gitProxy",
    plant: (repo) => {
      config(repo, "core.gitProxy", repo.mark);
      repo.git(["remote", "add", "origin", "git://example.invalid/x"]);
    },
    control: (repo) => repo.git(["fetch", "-q", "origin"]),
  },
  {
    name: "protocol ext:: (protocol.ext.allow)",
    plant: (repo) => {
      config(repo, "protocol.ext.allow", "always");
      repo.git(["remote", "add", "origin", `ext::${repo.mark}`]);
    },
    control: (repo) => repo.git(["fetch", "-q", "origin"]),
  },
  {
    name: "remote.<name>.uploadpack",
    plant: (repo) => {
      const source = join(repo.root, "source");
      repo.git(["init", "-q", source], { cwd: repo.root });
      repo.git(["remote", "add", "origin", source]);
      config(repo, "remote.origin.uploadpack", repo.mark);
    },
    control: (repo) => repo.git(["fetch", "-q", "origin"]),
  },
  {
    name: "remote.<name>.receivepack",
    plant: (repo) => {
      const target = join(repo.root, "target.git");
      repo.git(["init", "-q", "--bare", target], { cwd: repo.root });
      repo.git(["remote", "add", "origin", target]);
      config(repo, "remote.origin.receivepack", repo.mark);
    },
    control: (repo) => repo.git(["push", "-q", "origin", "main"]),
  },
  {
    name: "credential.helper",
    plant: (repo) => config(repo, "credential.helper", repo.mark),
    control: credentialFill,
  },
  {
    name: "core.askPass",
    plant: (repo) => config(repo, "core.askPass", repo.mark),
    control: credentialFill,
  },
  {
    name: "core.alternateRefsCommand",
    plant: (repo) => {
      const alternate = join(repo.root, "alternate.git");
      repo.git(["init", "-q", "--bare", alternate], { cwd: repo.root });
      repo.write(join(repo.dir, ".git", "objects", "info", "alternates"), `${join(alternate, "objects")}\n`);
      config(repo, "core.alternateRefsCommand", repo.mark);
    },
    control: pushInto,
  },
  {
    name: "trailer.<token>.command",
    plant: (repo) => config(repo, "trailer.t.command", repo.mark),
    control: (repo) => repo.git(["interpret-trailers", "--trailer", "t=1"], { input: "subject\n" }),
  },
  {
    name: "merge.<driver>.driver",
    plant: (repo) => {
      divergingBranches(repo);
      repo.write(join(repo.dir, ".git", "info", "attributes"), "a.txt merge=evil\n");
      config(repo, "merge.evil.driver", repo.mark);
    },
    control: (repo) => repo.git(["merge", "-q", "--no-edit", "other"]),
  },
  {
    name: "hook reference-transaction",
    plant: (repo) => hook(repo, "reference-transaction"),
    control: (repo) => repo.git(["update-ref", "refs/heads/moved", "HEAD"]),
  },
  {
    name: "hook post-checkout",
    plant: (repo) => hook(repo, "post-checkout"),
    control: (repo) => repo.git(["checkout", "-q", "-b", "next"]),
  },
  {
    name: "hook pre-commit",
    plant: (repo) => hook(repo, "pre-commit"),
    control: (repo) => repo.git(["commit", "-q", "--allow-empty", "-m", "x"]),
  },
  {
    name: "hook post-commit",
    plant: (repo) => hook(repo, "post-commit"),
    control: (repo) => repo.git(["commit", "-q", "--allow-empty", "-m", "x"]),
  },
  {
    name: "hook post-merge",
    plant: (repo) => {
      repo.git(["checkout", "-q", "-b", "ahead"]);
      repo.git(["commit", "-q", "--allow-empty", "-m", "ahead"]);
      repo.git(["checkout", "-q", "main"]);
      hook(repo, "post-merge");
    },
    control: (repo) => repo.git(["merge", "-q", "ahead"]),
  },
  {
    name: "hook pre-push",
    plant: (repo) => {
      const target = join(repo.root, "target.git");
      repo.git(["init", "-q", "--bare", target], { cwd: repo.root });
      repo.git(["remote", "add", "origin", target]);
      hook(repo, "pre-push");
    },
    control: (repo) => repo.git(["push", "-q", "origin", "main"]),
  },
  {
    name: "hook pre-receive",
    plant: (repo) => hook(repo, "pre-receive"),
    control: pushInto,
  },
  {
    name: "gitfile (.git names a git directory elsewhere)",
    plant: (repo) => {
      const store = join(repo.root, "store.git");
      repo.git(["init", "-q", "--separate-git-dir", store, "."]);
      config(repo, "core.fsmonitor", repo.mark);
    },
    control: status,
  },
  {
    name: "linked worktree (commondir)",
    plant: (repo) => {
      repo.git(["worktree", "add", "-q", "-b", "side", join(repo.root, "worktree")]);
      config(repo, "core.fsmonitor", repo.mark);
    },
    control: (repo) => repo.git(["status"], { cwd: join(repo.root, "worktree") }),
    sessionCwd: (repo) => join(repo.root, "worktree"),
  },
  {
    name: "core.worktree",
    plant: (repo) => {
      const elsewhere = join(repo.root, "elsewhere");
      repo.write(join(elsewhere, "a.txt"), "hello\n");
      repo.write(join(elsewhere, ".gitattributes"), "a.txt filter=evil\n");
      repo.touchStatDirty(join(elsewhere, "a.txt"));
      config(repo, "core.worktree", elsewhere);
      config(repo, "filter.evil.clean", repo.mark);
    },
    control: status,
  },
  {
    name: "submodule (its own core.fsmonitor)",
    plant: (repo) => {
      const library = createTestRepo(join(repo.root, "library"));
      repo.git(["-c", "protocol.file.allow=always", "submodule", "add", "-q", library.dir, "lib"]);
      repo.git(["commit", "-q", "-m", "submodule"]);
      repo.git([
        "config",
        "-f",
        join(repo.dir, ".git", "modules", "lib", "config"),
        "core.fsmonitor",
        repo.mark,
      ]);
    },
    control: status,
  },
];
