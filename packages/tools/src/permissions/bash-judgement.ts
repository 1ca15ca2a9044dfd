import type { PermissionMode } from "@forkloop/loop-core";
import { analyzeShell, type ShellCommand } from "../shell/analyze-shell.js";
import { gitFilesRead, gitOutputFiles } from "../shell/git-read-only.js";
import { programName } from "../shell/program-name.js";
import { type PathRead, readOnlyVerdict } from "../shell/read-only-commands.js";
import { displayWord, type ShellWord } from "../shell/shell-word.js";
import { type CommandSpecifier, commandMatchesRule } from "./bash-rule-match.js";
import { hiddenDeniedCommand } from "./hidden-commands.js";
import type { PermissionRule, RuleMatchContext, RuleSpecifier } from "./permission-rules.js";
import { ShellPaths } from "./shell-paths.js";

export interface BashJudgementContext {
  readonly mode: PermissionMode;
  readonly rules: {
    readonly allow: readonly PermissionRule[];
    readonly ask: readonly PermissionRule[];
    readonly deny: readonly PermissionRule[];
  };
  readonly match: RuleMatchContext;
  readonly workspaceRoots: readonly string[];
}

/** What the checker needs to decide a Bash call in any mode (R-S1…R-S3). */
export interface BashJudgement {
  /** A deny rule covers a part: denied in every mode. */
  readonly denied?: string;
  /** Needs a person's answer in every mode, bypassPermissions included (an ask rule, or a deny rule that cannot be checked). */
  readonly askAlways?: string;
  /** Every part only reads (plan mode allows only this). */
  readonly readOnly: boolean;
  /** Why it is not read-only (for plan mode's message). */
  readonly notReadOnly?: string;
  /** Why it needs approval in default/acceptEdits/dontAsk/auto, or undefined when rules and the read-only set cover it. */
  readonly needsApproval?: string;
  /** The rule that would allow it. */
  readonly suggestion: string;
}

/** A word's text in messages. */
const shown = (words: readonly ShellWord[]): string => words.map(displayWord).join(" ");

/**
 * Judges one Bash command: every simple command the parser finds (inside substitutions,
 * wrappers and literal `bash -c` scripts) is matched against the deny, ask and allow rules on its
 * own; each must be read-only (the vetted table, reading only inside the workspace) or allowed by
 * a rule; every redirection is a read or a write of that path, checked like Read and Write.
 */
export function judgeBash(command: string, context: BashJudgementContext): BashJudgement {
  const analysis = analyzeShell(command);
  const whole = command.trim().replace(/\s+/g, " ");
  const bashRules = (list: readonly PermissionRule[]) => list.filter((rule) => rule.toolName === "Bash");
  const suggestion = suggestRule(analysis.commands, analysis.opaque.length > 0 ? whole : undefined);
  const base = { suggestion };

  for (const rule of bashRules(context.rules.deny)) {
    const specifier = rule.specifier;
    if (specifier === undefined) return { ...base, denied: rule.raw, readOnly: false };
    if (!isCommandSpecifier(specifier)) continue;
    if (analysis.commands.some((part) => commandMatchesRule(specifier, part, "deny"))) {
      return { ...base, denied: rule.raw, readOnly: false };
    }
  }
  const paths = new ShellPaths(context);
  const pathDenial = paths.deniedByPathRule(analysis.commands);
  if (pathDenial.denied !== undefined) return { ...base, denied: pathDenial.denied, readOnly: false };

  const bashDenyRules = bashRules(context.rules.deny);
  if (analysis.opaque.length > 0 && bashDenyRules.length > 0) {
    return {
      ...base,
      readOnly: false,
      askAlways: `the command cannot be checked against the rule deny: ${bashDenyRules[0]?.raw} (${analysis.opaque[0]})`,
    };
  }
  if (pathDenial.unverifiable !== undefined)
    return { ...base, readOnly: false, askAlways: pathDenial.unverifiable };
  const hidden = hiddenDeniedCommand(analysis.commands, commandRules(bashDenyRules));
  if (hidden !== undefined) {
    return {
      ...base,
      readOnly: false,
      askAlways: `it may run a command the rule deny: ${hidden.rule} covers (${hidden.where})`,
    };
  }
  for (const rule of bashRules(context.rules.ask)) {
    const specifier = rule.specifier;
    const covers =
      specifier === undefined ||
      (isCommandSpecifier(specifier) &&
        analysis.commands.some((part) => commandMatchesRule(specifier, part, "deny")));
    if (covers) return { ...base, readOnly: false, askAlways: `rule ask: ${rule.raw}` };
  }

  const exactAllow = bashRules(context.rules.allow).some(
    (rule) => rule.specifier?.type === "command-exact" && rule.specifier.command === whole,
  );
  let notReadOnly: string | undefined =
    analysis.opaque[0] === undefined ? undefined : `it cannot be checked: ${analysis.opaque[0]}`;
  let needsApproval = exactAllow ? undefined : notReadOnly;
  const note = (readOnlyProblem: string, approval: string | undefined): void => {
    notReadOnly ??= readOnlyProblem;
    if (!exactAllow && approval !== undefined) needsApproval ??= approval;
  };

  for (const part of analysis.commands) {
    for (const [problem, approval] of paths.oncePerPart("judge", part, () =>
      partNotes(part, paths, bashRules(context.rules.allow)),
    ))
      note(problem, approval);
    paths.noteDirectoryChange(part);
  }
  return {
    ...base,
    readOnly: notReadOnly === undefined,
    ...(notReadOnly === undefined ? {} : { notReadOnly }),
    ...(needsApproval === undefined ? {} : { needsApproval }),
  };
}

/**
 * What one simple command adds to the judgement, as (why it is not read-only, why it needs
 * approval — undefined when a rule allows it) pairs, in order: its redirections and git output
 * files (reads and writes checked like Read and Write), then the command itself against the
 * read-only table and the allow rules.
 */
function partNotes(
  part: ShellCommand,
  paths: ShellPaths,
  allowRules: readonly PermissionRule[],
): (readonly [string, string | undefined])[] {
  const notes: (readonly [string, string | undefined])[] = [];
  const outputs =
    programName(part.words[0]) === "git"
      ? gitOutputFiles(part.words.slice(1)).map((target) => ({ access: "write" as const, target }))
      : [];
  for (const redirect of [...part.redirects, ...outputs]) {
    const problem =
      redirect.access === "read" ? paths.readProblem({ word: redirect.target, recursive: false }) : undefined;
    if (problem !== undefined) notes.push([problem, problem]);
    if (redirect.access === "write") {
      const write = paths.writeProblem(redirect.target);
      if (write.mutates) notes.push([`it writes ${redirect.target.text}`, write.approval]);
    }
  }
  const partProblem = part.wraps ? undefined : readOnlyProblem(part, paths);
  if (partProblem !== undefined) {
    const allowed = allowRules.some((rule) => {
      const specifier = rule.specifier;
      if (specifier === undefined) return true;
      return isCommandSpecifier(specifier) && commandMatchesRule(specifier, part, "allow");
    });
    // An allow rule for git approves git, not what the repository's config makes it run, nor
    // `git diff --no-index /dev/null ~/.ssh/id_rsa`.
    const gitProblem =
      allowed && programName(part.words[0]) === "git"
        ? (gitFilesRead(part.words.slice(1))
            .map((read) => paths.readProblem(read))
            .find((problem) => problem !== undefined) ?? paths.gitRepositoryProblem(part))
        : undefined;
    notes.push([partProblem, allowed && gitProblem === undefined ? undefined : (gitProblem ?? partProblem)]);
  }
  return notes;
}

/** Why one simple command is not read-only, or undefined when it only reads inside the workspace. */
function readOnlyProblem(part: ShellCommand, paths: ShellPaths): string | undefined {
  if (part.words.length === 0) {
    // `x=1` is harmless; `PATH=…`, `IFS=…`, `LD_PRELOAD=…` change what later commands run.
    const risky = part.assignments.find((name) => !/^[a-z_][a-z0-9_]*$/.test(name));
    return risky === undefined ? undefined : `it sets ${risky}`;
  }
  const name = programName(part.words[0]) ?? part.words[0]?.text ?? "";
  const risky = part.assignments.find((variable) => !/^[a-z_][a-z0-9_]*$/.test(variable));
  if (risky !== undefined) return `${name} runs with ${risky} set`;
  const args = paths.expandPatterns(part.words.slice(1));
  if (typeof args === "string") return `${name}: ${args}`;
  if (part.extraArguments) args.push({ kind: "dynamic", text: "(arguments read from stdin)" });
  const verdict = readOnlyVerdict(name, args);
  if (!verdict.readOnly) return verdict.reason;
  if (verdict.changesDirectory !== undefined) return paths.changeDirectory(verdict.changesDirectory);
  for (const read of verdict.reads) {
    const problem = paths.readProblem(read);
    if (problem !== undefined) return `${shown(part.words)}: ${problem}`;
  }
  if (verdict.runsGit === true) return paths.gitRepositoryProblem(part);
  return undefined;
}

/** The rules with a command specifier (`Bash(rm:*)`), with it. */
function commandRules(
  rules: readonly PermissionRule[],
): { readonly raw: string; readonly specifier: CommandSpecifier }[] {
  return rules.flatMap((rule) => {
    const specifier = rule.specifier;
    return specifier !== undefined && isCommandSpecifier(specifier) ? [{ raw: rule.raw, specifier }] : [];
  });
}

/** `Bash(npm test)`, `Bash(npm test:*)`, `Bash(npm run *)` (not a path or domain specifier). */
function isCommandSpecifier(specifier: RuleSpecifier): specifier is CommandSpecifier {
  return (
    specifier.type === "command-exact" ||
    specifier.type === "command-prefix" ||
    specifier.type === "command-wildcard"
  );
}

/** `Bash(npm test:*)` for `npm test -- --watch`; the exact command when a part cannot be checked. */
function suggestRule(commands: readonly ShellCommand[], exact: string | undefined): string {
  if (exact !== undefined) return `Bash(${exact})`;
  const first = commands.find(
    (part) =>
      !part.wraps &&
      part.words.length > 0 &&
      readOnlyVerdict(programName(part.words[0]) ?? "", part.words.slice(1)).readOnly === false,
  );
  const words = (first ?? commands.find((part) => part.words.length > 0))?.words ?? [];
  const name = programName(words[0]) ?? words[0]?.text ?? "";
  const second =
    words[1]?.kind === "literal" && !words[1].value.startsWith("-") ? ` ${displayWord(words[1])}` : "";
  return `Bash(${name}${second}:*)`;
}

export type { PathRead };
