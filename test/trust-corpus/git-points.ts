import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join, relative } from "node:path";
import { appendGitConfig, git, initRepo, touchPayload, writeScript } from "./places.js";

/**
 * Every place git's documentation gives a repository to name a program or a file git reads (
 * git-config(1): each key that names a program, includes; githooks(5): every hook; gitrepository-
 * layout(5): gitfiles, `commondir`, `objects/info/alternates`, `core.worktree`), each planted into
 * a repository so that running it leaves a marker file holding its environment. forkloop's own git
 * calls (the session prefetch: `rev-parse`, `status`, `log`) must run none of them (R-S7).
 */

export interface PlantContext {
  /** A committed repository (a.txt tracked). */
  readonly repo: string;
  /** Where this case's program writes its marker. */
  readonly marker: string;
  /** A directory outside the workspace for this run. */
  readonly outside: string;
}

export interface GitPoint {
  readonly id: string;
  readonly what: string;
  /**
   * The CLI workspace it is planted into together with the others of the same set: cases of one
   * set never use the same key, hook or file, and none stops git before another's point.
   */
  readonly set: string;
  /** Plain `git status` + `git log` (as forkloop's prefetch calls them) run it: the control sees it. */
  readonly plainGitRuns: boolean;
  /** It plants files that must be committed (commitPlanted) for git status to read them again. */
  readonly commits?: true;
  /** Text from outside the workspace that must not reach the model (instead of a marker). */
  readonly leak?: string;
  readonly plant: (context: PlantContext) => void;
  /** The argument of a process the payload leaves running (checked in /proc). */
  readonly sleepToken?: (marker: string) => string;
}

/** A sleep duration no other process has: a number of seconds derived from the marker's path. */
export function sleepToken(marker: string): string {
  return `${31_000_000 + (Number.parseInt(createHash("sha256").update(marker).digest("hex").slice(0, 8), 16) % 999_999)}`;
}

/** githooks(5), git 2.39: every hook a repository's hooks directory can hold. */
export const GIT_HOOKS = [
  "applypatch-msg",
  "pre-applypatch",
  "post-applypatch",
  "pre-commit",
  "pre-merge-commit",
  "prepare-commit-msg",
  "commit-msg",
  "post-commit",
  "pre-rebase",
  "post-checkout",
  "post-merge",
  "pre-push",
  "pre-receive",
  "update",
  "proc-receive",
  "post-receive",
  "post-update",
  "reference-transaction",
  "push-to-checkout",
  "pre-auto-gc",
  "post-rewrite",
  "sendemail-validate",
  "fsmonitor-watchman",
  "p4-changelist",
  "p4-prepare-changelist",
  "p4-post-changelist",
  "p4-pre-submit",
  "post-index-change",
] as const;

/** Hooks plain `git status` runs (when it refreshes a stale index). */
const STATUS_HOOKS = new Set(["post-index-change"]);

const payload = (marker: string) => touchPayload(marker);
/** A clean/textconv-style program: leaves the marker, passes the content through. */
const filterPayload = (marker: string) => `${payload(marker)}; cat`;

/**
 * A file of its own for a filter case. The set's planter commits the planted files with every
 * attribute source hidden (commitPlanted): git must not run the drivers while the test sets up.
 */
function trackedFile(repo: string, name: string): void {
  writeFileSync(join(repo, name), `${name}\n`);
}

/** Where git finds attributes that select drivers (core.attributesFile is overridden). */
const ATTRIBUTE_SOURCES = [".gitattributes", join(".git", "info", "attributes")];

/**
 * Commits what the points planted (their tracked files, scripts, included configs) with the
 * attribute files moved aside: a commit refreshes the index, and with attributes in place it would
 * run the planted filters itself. Committed, a file whose stat data then goes stale must be read
 * again by `git status` — through its filter.
 */
export function commitPlanted(repo: string): void {
  const hidden = ATTRIBUTE_SOURCES.map((path) => join(repo, path)).filter((path) => existsSync(path));
  for (const path of hidden) renameSync(path, `${path}.hidden`);
  try {
    git(repo, "-c", "core.attributesFile=/dev/null", "add", "-A");
    git(
      repo,
      "-c",
      "core.attributesFile=/dev/null",
      "-c",
      "user.email=t@t",
      "-c",
      "user.name=t",
      "commit",
      "-q",
      "-m",
      "planted",
    );
  } finally {
    for (const path of hidden) renameSync(`${path}.hidden`, path);
  }
}

/** A filter driver `driver` selected for `file` by a line in `attributes` (a path in the repo). */
function cleanFilter(context: PlantContext, driver: string, attributes: string, configFile?: string): void {
  const file = `${driver}.dat`;
  trackedFile(context.repo, file);
  mkdirSync(join(attributes, ".."), { recursive: true });
  writeFileSync(attributes, `${file} filter=${driver}\n`, { flag: "a" });
  const config = `[filter "${driver}"]\n\tclean = ${filterPayload(context.marker)}\n`;
  if (configFile === undefined) appendGitConfig(context.repo, config);
  else writeFileSync(configFile, config);
}

/** A commit on top of HEAD with a `gpgsig` header of `armor` (not a valid signature: git still asks the program). */
function signedCommit(repo: string, armor: readonly string[]): void {
  const tree = git(repo, "rev-parse", "HEAD^{tree}").trim();
  const parent = git(repo, "rev-parse", "HEAD").trim();
  const body = [
    `tree ${tree}`,
    `parent ${parent}`,
    "author t <t@t> 1 +0000",
    "committer t <t@t> 1 +0000",
    `gpgsig ${armor.join("\n ")}`,
    "",
    "signed",
    "",
  ].join("\n");
  const commit = execFileSync("git", ["hash-object", "-t", "commit", "-w", "--stdin"], {
    cwd: repo,
    input: body,
    encoding: "utf8",
  }).trim();
  git(repo, "update-ref", "HEAD", commit);
}

/** A config key whose value is a shell command (git runs such values with `sh -c`). */
function programKey(id: string, what: string, section: string, key: string): GitPoint {
  return {
    id,
    what,
    set: "config",
    plainGitRuns: false,
    plant: ({ repo, marker }) => appendGitConfig(repo, `${section}\n\t${key} = ${payload(marker)}`),
  };
}

/** An attribute-selected driver program (`diff=`, `merge=`), with its own tracked file. */
function attributeDriver(id: string, what: string, kind: "diff" | "merge", key: string): GitPoint {
  return {
    id,
    what,
    set: "config",
    plainGitRuns: false,
    plant: ({ repo, marker }) => {
      const driver = id.replace(/[^a-z]/g, "");
      trackedFile(repo, `${driver}.dat`);
      writeFileSync(join(repo, ".gitattributes"), `${driver}.dat ${kind}=${driver}\n`, { flag: "a" });
      appendGitConfig(repo, `[${kind} "${driver}"]\n\t${key} = ${filterPayload(marker)}`);
    },
  };
}

/** A git directory moved out of the worktree to `target`, returning it. */
function moveGitDir(repo: string, target: string): string {
  mkdirSync(join(target, ".."), { recursive: true });
  renameSync(join(repo, ".git"), target);
  return target;
}

const hookCases: GitPoint[] = GIT_HOOKS.map((hook) => ({
  id: `git-hook-${hook}`,
  what: `.git/hooks/${hook} (githooks(5))`,
  set: "hooks",
  plainGitRuns: STATUS_HOOKS.has(hook),
  plant: ({ repo, marker }) => writeScript(join(repo, ".git", "hooks", hook), payload(marker)),
}));

const configCases: GitPoint[] = [
  {
    id: "git-core-fsmonitor",
    what: "core.fsmonitor = a shell command (run on every index refresh)",
    set: "config",
    plainGitRuns: true,
    plant: ({ repo, marker }) => appendGitConfig(repo, `[core]\n\tfsmonitor = ${payload(marker)}; false`),
  },
  {
    id: "git-fsmonitor-hook-script",
    what: "core.fsmonitor = .git/hooks/fsmonitor-watchman (the documented setup, a script in the repository)",
    set: "hookspath",
    plainGitRuns: true,
    plant: ({ repo, marker }) => {
      writeScript(join(repo, ".git", "hooks", "fsmonitor-watchman"), `${payload(marker)}\nexit 1`);
      appendGitConfig(repo, "[core]\n\tfsmonitor = .git/hooks/fsmonitor-watchman");
    },
  },
  {
    id: "git-fsmonitor-tracked-script",
    commits: true,
    what: "core.fsmonitor = ./tools/watch.sh, a script the checkout ships",
    set: "hookspath-abs",
    plainGitRuns: true,
    plant: ({ repo, marker }) => {
      writeScript(join(repo, "tools", "watch.sh"), `${payload(marker)}\nexit 1`);
      appendGitConfig(repo, "[core]\n\tfsmonitor = ./tools/watch.sh");
    },
  },
  {
    id: "git-fsmonitor-lingers",
    what: "core.fsmonitor starts a process that outlives git (a marker plus a sleep left running)",
    set: "lingering",
    plainGitRuns: true,
    sleepToken: (marker) => sleepToken(marker),
    plant: ({ repo, marker }) => {
      appendGitConfig(
        repo,
        `[core]\n\tfsmonitor = ${payload(marker)}; (setsid sleep ${sleepToken(marker)} >/dev/null 2>&1 &); false`,
      );
    },
  },
  {
    id: "git-hookspath-tracked",
    what: "core.hooksPath = .githooks, a directory the checkout ships (husky style), with post-index-change",
    set: "hookspath",
    plainGitRuns: true,
    plant: ({ repo, marker }) => {
      writeScript(join(repo, ".githooks", "post-index-change"), payload(marker));
      appendGitConfig(repo, "[core]\n\thooksPath = .githooks");
    },
  },
  {
    id: "git-hookspath-outside",
    what: "core.hooksPath = an absolute directory outside the workspace, with post-index-change",
    set: "hookspath-abs",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      writeScript(join(outside, "hooks", "post-index-change"), payload(marker));
      appendGitConfig(repo, `[core]\n\thooksPath = ${join(outside, "hooks")}`);
    },
  },
  {
    id: "git-filter-clean",
    commits: true,
    what: "filter.<driver>.clean selected by .gitattributes (status re-hashes a file whose stat changed)",
    set: "config",
    plainGitRuns: true,
    plant: (context) => cleanFilter(context, "cleanattr", join(context.repo, ".gitattributes")),
  },
  {
    id: "git-filter-process",
    what: "filter.<driver>.process (a long-running filter) selected by .gitattributes",
    set: "filter-process",
    plainGitRuns: true,
    // On the committed a.txt (its own set): status re-reads it through the filter.
    plant: ({ repo, marker }) => {
      writeFileSync(join(repo, ".gitattributes"), "a.txt filter=proc\n", { flag: "a" });
      appendGitConfig(repo, `[filter "proc"]\n\tprocess = ${payload(marker)}`);
    },
  },
  {
    id: "git-filter-info-attributes",
    commits: true,
    what: "a filter selected by .git/info/attributes",
    set: "config",
    plainGitRuns: true,
    plant: (context) => cleanFilter(context, "infoattr", join(context.repo, ".git", "info", "attributes")),
  },
  {
    id: "git-filter-attributes-file",
    commits: true,
    what: "a filter selected by core.attributesFile naming a file the checkout ships",
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      cleanFilter(context, "attrfile", join(context.repo, "conf", "attributes"));
      appendGitConfig(context.repo, "[core]\n\tattributesFile = conf/attributes");
    },
  },
  {
    id: "git-filter-smudge",
    what: "filter.<driver>.smudge (checkout only)",
    set: "config",
    plainGitRuns: false,
    plant: ({ repo, marker }) => {
      writeFileSync(join(repo, ".gitattributes"), "a.txt filter=smudgeonly\n", { flag: "a" });
      appendGitConfig(repo, `[filter "smudgeonly"]\n\tsmudge = ${filterPayload(marker)}`);
    },
  },
  {
    id: "git-include-path",
    commits: true,
    what: "include.path = a config file the checkout ships (it names a filter)",
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      const file = join(context.repo, "conf", "include.cfg");
      mkdirSync(join(file, ".."), { recursive: true });
      cleanFilter(context, "incpath", join(context.repo, ".gitattributes"), file);
      appendGitConfig(context.repo, "[include]\n\tpath = ../conf/include.cfg");
    },
  },
  {
    id: "git-includeif-gitdir",
    commits: true,
    what: 'includeIf "gitdir:/" (every repository) naming a shipped config file',
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      const file = join(context.repo, "conf", "gitdir.cfg");
      mkdirSync(join(file, ".."), { recursive: true });
      cleanFilter(context, "incgitdir", join(context.repo, ".gitattributes"), file);
      appendGitConfig(context.repo, '[includeIf "gitdir:/"]\n\tpath = ../conf/gitdir.cfg');
    },
  },
  {
    id: "git-includeif-gitdir-i",
    commits: true,
    what: 'includeIf "gitdir/i:/" (case-insensitive) naming a shipped config file',
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      const file = join(context.repo, "conf", "gitdiri.cfg");
      mkdirSync(join(file, ".."), { recursive: true });
      cleanFilter(context, "incgitdiri", join(context.repo, ".gitattributes"), file);
      appendGitConfig(context.repo, '[includeIf "gitdir/i:/"]\n\tpath = ../conf/gitdiri.cfg');
    },
  },
  {
    id: "git-includeif-onbranch",
    commits: true,
    what: 'includeIf "onbranch:main" naming a shipped config file',
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      const file = join(context.repo, "conf", "onbranch.cfg");
      mkdirSync(join(file, ".."), { recursive: true });
      cleanFilter(context, "inconbranch", join(context.repo, ".gitattributes"), file);
      appendGitConfig(context.repo, '[includeIf "onbranch:main"]\n\tpath = ../conf/onbranch.cfg');
    },
  },
  {
    id: "git-includeif-hasconfig",
    commits: true,
    what: 'includeIf "hasconfig:remote.*.url:…" naming a shipped config file',
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      const file = join(context.repo, "conf", "hasconfig.cfg");
      mkdirSync(join(file, ".."), { recursive: true });
      cleanFilter(context, "inchasconfig", join(context.repo, ".gitattributes"), file);
      appendGitConfig(
        context.repo,
        '[remote "origin"]\n\turl = https://example.com/r.git\n[includeIf "hasconfig:remote.*.url:https://example.com/**"]\n\tpath = ../conf/hasconfig.cfg',
      );
    },
  },
  {
    id: "git-worktree-config",
    commits: true,
    what: "extensions.worktreeConfig + .git/config.worktree (a second config file) naming a filter",
    set: "config",
    plainGitRuns: true,
    plant: (context) => {
      const file = join(context.repo, ".git", "config.worktree");
      appendGitConfig(
        context.repo,
        "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tworktreeConfig = true",
      );
      cleanFilter(context, "worktreecfg", join(context.repo, ".gitattributes"), file);
    },
  },
  {
    id: "git-showsignature-gpg",
    what: "log.showSignature + gpg.program, HEAD carrying a PGP signature (git log verifies it)",
    set: "config",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      const program = join(outside, "gpg-program");
      writeScript(program, payload(marker));
      signedCommit(repo, ["-----BEGIN PGP SIGNATURE-----", "", "x", "-----END PGP SIGNATURE-----"]);
      appendGitConfig(repo, `[log]\n\tshowSignature = true\n[gpg]\n\tprogram = ${program}`);
    },
  },
  {
    id: "git-showsignature-ssh",
    what: "log.showSignature + gpg.ssh.program, a commit carrying an SSH signature",
    set: "config",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      const program = join(outside, "ssh-program");
      writeScript(program, payload(marker));
      signedCommit(repo, ["-----BEGIN SSH SIGNATURE-----", "x", "-----END SSH SIGNATURE-----"]);
      appendGitConfig(
        repo,
        `[log]\n\tshowSignature = true\n[gpg "ssh"]\n\tprogram = ${program}\n\tallowedSignersFile = /dev/null`,
      );
    },
  },
  {
    id: "git-showsignature-x509",
    what: "log.showSignature + gpg.x509.program, a commit carrying an X.509 signature",
    set: "config",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      const program = join(outside, "x509-program");
      writeScript(program, payload(marker));
      signedCommit(repo, ["-----BEGIN SIGNED MESSAGE-----", "x", "-----END SIGNED MESSAGE-----"]);
      appendGitConfig(repo, `[log]\n\tshowSignature = true\n[gpg "x509"]\n\tprogram = ${program}`);
    },
  },
  {
    id: "git-ssh-default-key-command",
    what: "gpg.ssh.defaultKeyCommand (signing only)",
    set: "config",
    plainGitRuns: false,
    plant: ({ repo, marker }) =>
      appendGitConfig(repo, `[gpg "ssh"]\n\tdefaultKeyCommand = ${payload(marker)}`),
  },
  programKey("git-core-pager", "core.pager", "[core]", "pager"),
  programKey("git-pager-status", "pager.status (a pager for git status)", "[pager]", "status"),
  programKey("git-pager-log", "pager.log", "[pager]", "log"),
  programKey("git-core-editor", "core.editor", "[core]", "editor"),
  programKey("git-sequence-editor", "sequence.editor", "[sequence]", "editor"),
  programKey("git-core-sshcommand", "core.sshCommand", "[core]", "sshCommand"),
  programKey("git-core-askpass", "core.askPass", "[core]", "askPass"),
  programKey("git-credential-helper", "credential.helper (a `!` shell helper)", "[credential]", "helper"),
  programKey("git-diff-external", "diff.external", "[diff]", "external"),
  programKey("git-core-gitproxy", "core.gitProxy", "[core]", "gitProxy"),
  programKey("git-remote-uploadpack", "remote.<name>.uploadpack", '[remote "up"]', "uploadpack"),
  programKey("git-remote-receivepack", "remote.<name>.receivepack", '[remote "rp"]', "receivepack"),
  programKey("git-alternate-refs-command", "core.alternateRefsCommand", "[core]", "alternateRefsCommand"),
  programKey("git-pack-objects-hook", "uploadpack.packObjectsHook", "[uploadpack]", "packObjectsHook"),
  programKey("git-interactive-difffilter", "interactive.diffFilter", "[interactive]", "diffFilter"),
  programKey("git-difftool-cmd", "difftool.<tool>.cmd with diff.tool", '[difftool "t"]', "cmd"),
  programKey("git-mergetool-cmd", "mergetool.<tool>.cmd with merge.tool", '[mergetool "t"]', "cmd"),
  programKey("git-browser-cmd", "browser.<tool>.cmd with web.browser", '[browser "b"]', "cmd"),
  programKey("git-man-cmd", "man.<tool>.cmd", '[man "m"]', "cmd"),
  programKey(
    "git-sendemail-smtpserver",
    "sendemail.smtpServer (a program path)",
    "[sendemail]",
    "smtpServer",
  ),
  programKey("git-trace2-target", "trace2.normalTarget (a file git writes)", "[trace2]", "normalTarget"),
  attributeDriver(
    "git-diff-textconv",
    "diff.<driver>.textconv selected by .gitattributes",
    "diff",
    "textconv",
  ),
  attributeDriver("git-diff-command", "diff.<driver>.command selected by .gitattributes", "diff", "command"),
  attributeDriver("git-merge-driver", "merge.<driver>.driver selected by .gitattributes", "merge", "driver"),
  {
    id: "git-gc-auto",
    what: "gc.auto = 1 with a pre-auto-gc hook (automatic maintenance)",
    set: "config",
    plainGitRuns: false,
    plant: ({ repo, marker }) => {
      writeScript(join(repo, ".git", "hooks", "pre-auto-gc"), payload(marker));
      appendGitConfig(repo, "[gc]\n\tauto = 1\n\tautoDetach = false\n[maintenance]\n\tauto = true");
    },
  },
  {
    id: "git-submodule-fsmonitor",
    what: "a populated submodule whose own config names core.fsmonitor (status recurses into it)",
    set: "hookspath",
    plainGitRuns: true,
    plant: ({ repo, marker }) => {
      const sub = addSubmodule(repo, "subfs");
      appendGitConfig(sub, `[core]\n\tfsmonitor = ${payload(marker)}; false`);
    },
  },
  {
    id: "git-submodule-hook",
    what: "a populated submodule with its own post-index-change hook",
    set: "hookspath",
    plainGitRuns: true,
    plant: ({ repo, marker }) => {
      const sub = addSubmodule(repo, "subhook");
      writeScript(join(sub, ".git", "hooks", "post-index-change"), payload(marker));
    },
  },
  {
    id: "git-gitfile-outside",
    what: ".git is a gitfile naming a git directory outside the workspace, whose config has core.fsmonitor",
    set: "gitfile-out",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      const target = moveGitDir(repo, join(outside, "elsewhere.git"));
      writeFileSync(join(repo, ".git"), `gitdir: ${target}\n`);
      appendGitConfig(repo, `[core]\n\tfsmonitor = ${payload(marker)}; false`, join(target, "config"));
    },
  },
  {
    id: "git-gitfile-inside",
    what: ".git is a gitfile naming a git directory inside the checkout (.gitdata), with hooks",
    set: "gitfile-in",
    plainGitRuns: true,
    plant: ({ repo, marker }) => {
      const target = moveGitDir(repo, join(repo, ".gitdata"));
      writeFileSync(join(repo, ".git"), "gitdir: .gitdata\n");
      writeScript(join(target, "hooks", "post-index-change"), payload(marker));
    },
  },
  {
    id: "git-dotgit-symlink",
    what: ".git is a symlink to a git directory outside the workspace, whose config has core.fsmonitor",
    set: "dotgit-symlink",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      const target = moveGitDir(repo, join(outside, "linked.git"));
      symlinkSync(target, join(repo, ".git"));
      appendGitConfig(repo, `[core]\n\tfsmonitor = ${payload(marker)}; false`, join(target, "config"));
    },
  },
  {
    id: "git-commondir",
    what: ".git/commondir naming a directory outside the workspace whose config has core.fsmonitor",
    set: "commondir",
    plainGitRuns: true,
    plant: ({ repo, marker, outside }) => {
      const common = join(outside, "common.git");
      cpSync(join(repo, ".git"), common, { recursive: true });
      appendGitConfig(repo, `[core]\n\tfsmonitor = ${payload(marker)}; false`, join(common, "config"));
      writeFileSync(join(repo, ".git", "commondir"), `${relative(join(repo, ".git"), common)}\n`);
    },
  },
  {
    id: "git-core-worktree-outside",
    what: "core.worktree naming a directory outside the workspace: status lists its files",
    set: "elsewhere",
    plainGitRuns: true,
    leak: "OUTSIDE_WORKTREE_NAME_7c21",
    plant: ({ repo, outside }) => {
      const tree = join(outside, "worktree");
      mkdirSync(tree, { recursive: true });
      writeFileSync(join(tree, "OUTSIDE_WORKTREE_NAME_7c21"), "x\n");
      appendGitConfig(repo, `[core]\n\tworktree = ${tree}`);
    },
  },
  {
    id: "git-alternates-outside",
    what: "objects/info/alternates naming another repository's objects; HEAD at its commit: log shows its subject",
    set: "elsewhere",
    plainGitRuns: true,
    leak: "OUTSIDE_COMMIT_SUBJECT_52e8",
    plant: ({ repo, outside }) => {
      const other = initRepo(join(outside, "other"));
      git(
        other,
        "-c",
        "user.email=t@t",
        "-c",
        "user.name=t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "OUTSIDE_COMMIT_SUBJECT_52e8",
      );
      writeFileSync(
        join(repo, ".git", "objects", "info", "alternates"),
        `${join(other, ".git", "objects")}\n`,
      );
      git(repo, "update-ref", "HEAD", git(other, "rev-parse", "HEAD").trim());
    },
  },
];

/** A nested repository at `repo/name` recorded in `repo`'s index as a submodule (gitlink). */
function addSubmodule(repo: string, name: string): string {
  const sub = initRepo(join(repo, name));
  makeStale(repo);
  const head = git(sub, "rev-parse", "HEAD").trim();
  git(repo, "update-index", "--add", "--cacheinfo", `160000,${head},${name}`);
  writeFileSync(join(repo, ".gitmodules"), `[submodule "${name}"]\n\tpath = ${name}\n\turl = ./${name}\n`, {
    flag: "a",
  });
  return sub;
}

export const GIT_POINTS: readonly GitPoint[] = [...hookCases, ...configCases];

/**
 * Makes every worktree file's stat data differ from the index (mtime in 2001), as after a build or
 * a checkout: the next `git status` must re-read them and refresh the index. Skips `.git` dirs.
 */
export function makeStale(dir: string): void {
  const old = new Date("2001-01-01T00:00:00Z");
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === ".git" || entry.name === ".gitdata") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) makeStale(path);
    else if (entry.isFile()) utimesSync(path, old, old);
  }
}

/**
 * Runs git as forkloop's prefetch does, unhardened: the positive control. Output joined, and what
 * git said on stderr (a program it could not run is reported there, with exit 0), for the control
 * to show when a point it expects did not run.
 */
export function plainGit(cwd: string): { output: string; stderr: string } {
  let output = "";
  let stderr = "";
  for (const args of [
    ["rev-parse", "--show-toplevel"],
    ["rev-parse", "--abbrev-ref", "HEAD"],
    ["status", "--short"],
    ["log", "--oneline", "-n", "5"],
  ]) {
    // A payload may make git fail; its marker is what the control looks at.
    const run = spawnSync("git", args, {
      cwd,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    });
    if (run.status === 0) output += run.stdout;
    if (run.stderr || run.status !== 0)
      stderr += `git ${args.join(" ")} (exit ${run.status ?? run.signal ?? run.error?.message}): ${run.stderr ?? ""}\n`;
  }
  return { output, stderr };
}
