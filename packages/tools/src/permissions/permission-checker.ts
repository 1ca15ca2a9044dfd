import { homedir } from "node:os";
import { relative, resolve } from "node:path";
import type {
  CanUseTool,
  PermissionDecision,
  PermissionMode,
  PermissionProvenance,
  Tool,
} from "@forkloop/loop-core";
import { judgeBash } from "./bash-judgement.js";
import { permissionModeFacts } from "./permission-modes.js";
import { type PermissionRule, parsePermissionRule, ruleMatches } from "./permission-rules.js";
import { protectedWriteReason, protectedWriteTarget } from "./protected-paths.js";
import { hardLinkCount } from "./shell-paths.js";

export interface PermissionRules {
  readonly allow: readonly string[];
  readonly ask: readonly string[];
  readonly deny: readonly string[];
}

/** One refused call, for the run's final report (Claude Code's `permission_denials`). */
export interface PermissionDenial {
  readonly toolName: string;
  readonly toolUseId: string;
  readonly input: Record<string, unknown>;
  readonly reason: string;
}

export interface PermissionCheckerOptions {
  /**
   * The mode, or where to read it at each call (R-S14: a session's live mode, which a switch
   * during a turn changes for the calls after it).
   */
  readonly mode: PermissionMode | (() => PermissionMode);
  readonly rules: PermissionRules;
  readonly tools: readonly Tool[];
  /** Receives every call that needs a person's answer; without it, such calls are denied. */
  readonly askCaller?: CanUseTool;
  readonly onDenial?: (denial: PermissionDenial) => void;
  /** Project root that relative path rules are anchored to (default `process.cwd()`). */
  readonly cwd?: string;
  /** Where file tools may go (default `[cwd]`): a Bash read or redirect elsewhere needs approval (R-S3). */
  readonly workspaceRoots?: readonly string[];
  readonly home?: string;
  /** Tools that change only the agent's own state and never need approval (default: TodoWrite). */
  readonly noApprovalTools?: readonly string[];
}

/** Claude Code's file-editing tools: acceptEdits approves them (they confine themselves, R-P1). */
const FILE_EDIT_TOOLS = new Set(["Write", "Edit", "MultiEdit", "NotebookEdit"]);
const DEFAULT_NO_APPROVAL_TOOLS = ["TodoWrite"];
/** Tools that reach the network: never approved for being read-only, only by a rule or an answer. */
const NETWORK_TOOLS = new Set(["WebFetch", "WebSearch"]);

/**
 * Builds the loop's CanUseTool from a mode and rules (R-P1). Order, as in Claude Code:
 * 1. a matching `deny` rule denies, in every mode (bypassPermissions included);
 * 2. a matching `ask` rule asks, in every mode;
 * 3. `plan` denies every tool that is not read-only;
 * 4. `bypassPermissions` allows;
 * 5. a matching `allow` rule allows;
 * 6. read-only tools (and TodoWrite) are allowed; `acceptEdits` also allows file edits;
 * 7. everything else asks. `auto` behaves as `default` here: read-only calls are approved
 *    automatically, the rest asks (no classifier model decides for the user).
 * An ask goes to `askCaller`; under `dontAsk`, or with no caller, it is a denial whose message
 * says how to allow the call. A call a PreToolUse hook allowed is never asked about, but deny
 * rules and plan mode still refuse it (R-P1: no hook gets a change past plan mode). Every denial is reported through `onDenial`. Never throws.
 * Bash is judged by its parsed commands (judgeBash, R-S1…R-S3) in the same order; a Read of a file
 * with several hard links asks (it may be a file outside the workspace, R-S4).
 */
export function createPermissionChecker(options: PermissionCheckerOptions): CanUseTool {
  const parse = (list: readonly string[], kind: string): PermissionRule[] =>
    list.map((raw) => {
      const parsed = parsePermissionRule(raw);
      if ("error" in parsed) throw new Error(`permissions.${kind}: ${parsed.error}`);
      return parsed;
    });
  const rules = {
    allow: parse(options.rules.allow, "allow"),
    ask: parse(options.rules.ask, "ask"),
    deny: parse(options.rules.deny, "deny"),
  };
  const matchContext = { cwd: options.cwd ?? process.cwd(), home: options.home ?? homedir() };
  const noApproval = new Set(options.noApprovalTools ?? DEFAULT_NO_APPROVAL_TOOLS);
  const findTool = (name: string): Tool | undefined =>
    options.tools.find((tool) => tool.name === name || tool.aliases?.includes(name) === true);

  const given = options.mode;
  const modeOf = typeof given === "function" ? given : () => given;

  return async (toolName, input, callOptions) => {
    const mode = modeOf();
    const facts = permissionModeFacts(mode);
    const deny = (
      reason: string,
      decidedBy: PermissionProvenance,
      interrupt?: boolean,
    ): PermissionDecision => {
      options.onDenial?.({ toolName, toolUseId: callOptions.toolUseId, input, reason });
      return interrupt === true
        ? { behavior: "deny", message: reason, interrupt, decidedBy }
        : { behavior: "deny", message: reason, decidedBy };
    };
    const firstMatch = (
      list: readonly PermissionRule[],
      purpose: "allow" | "deny",
    ): PermissionRule | undefined =>
      list.find((rule) => ruleMatches(rule, toolName, input, purpose, matchContext));

    const isBash = toolName === "Bash" && typeof input.command === "string";
    const denyRule = isBash ? undefined : firstMatch(rules.deny, "deny");
    if (denyRule !== undefined)
      return deny(`Permission to use ${toolName} was denied by the rule deny: ${denyRule.raw}.`, BY_RULE);
    const tool = findTool(toolName);
    if (tool === undefined)
      return deny(`Unknown tool ${toolName}; no permission can be granted for it.`, BY_OTHER);

    // `explained`: the reason is what the user must know before allowing it (a protected path, a
    // hard-linked read), so it is kept when nobody can answer; other asks get Claude Code's words.
    const ask = async (why: string, rule?: string, explained?: "explained"): Promise<PermissionDecision> => {
      // A PreToolUse hook already answered the question (it is the user's own); only the ask is
      // skipped: deny rules and plan mode were decided before any ask (R-P1).
      if (callOptions.approvedByHook === true) return { behavior: "allow", decidedBy: BY_HOOK };
      if (facts.deniesAsks) {
        return deny(
          `${why}, and dontAsk mode denies anything that is not pre-approved. ${howToAllow(toolName, input, matchContext.cwd, rule)}`,
          UNANSWERED,
        );
      }
      if (options.askCaller === undefined) {
        return deny(
          (explained === undefined ? unapprovedCallMessage(toolName, input, matchContext.cwd) : undefined) ??
            `${why}, and no one is attached to approve it. ${howToAllow(toolName, input, matchContext.cwd, rule)}`,
          UNANSWERED,
        );
      }
      let decision: PermissionDecision;
      try {
        decision = await options.askCaller(toolName, input, {
          ...callOptions,
          reason: why,
          ...(rule === undefined ? {} : { suggestedRule: rule }),
        });
      } catch (error) {
        return deny(`The permission prompt failed: ${(error as Error).message}`, UNANSWERED);
      }
      // The asker's answer is the user's own unless it says who decided (a PermissionRequest hook).
      if (decision.behavior === "deny")
        return deny(decision.message, decision.decidedBy ?? BY_USER_REJECT, decision.interrupt);
      return decision.decidedBy === undefined ? { ...decision, decidedBy: BY_USER } : decision;
    };

    async function decideBash(command: string): Promise<PermissionDecision> {
      let judgement: ReturnType<typeof judgeBash>;
      try {
        judgement = judgeBash(command, {
          mode,
          rules,
          match: matchContext,
          workspaceRoots: options.workspaceRoots ?? [matchContext.cwd],
        });
      } catch (error) {
        return deny(
          `The Bash command could not be checked (${(error as Error).message}), so it was not run.`,
          BY_OTHER,
        );
      }
      const suggestion = judgement.suggestion;
      if (judgement.denied !== undefined) {
        return deny(`Permission to use Bash was denied by the rule deny: ${judgement.denied}.`, BY_RULE);
      }
      if (judgement.askAlways !== undefined)
        return ask(`Bash needs approval: ${judgement.askAlways}`, suggestion);
      if (facts.readOnly && !judgement.readOnly) {
        return deny(
          `Plan mode allows only read-only tools, and this Bash call would change things (${judgement.notReadOnly}). ` +
            "Finish the plan and ask the user to approve it before making changes.",
          BY_MODE,
        );
      }
      if (facts.approvesEverything) return { behavior: "allow", decidedBy: BY_MODE };
      // Approved without a question: by a rule naming Bash itself, else part by part (each part
      // read-only or allowed by its rule), which Claude Code reports as its subcommands' results.
      if (judgement.needsApproval === undefined) {
        const wholeTool = rules.allow.some((rule) => rule.raw === "Bash");
        return { behavior: "allow", decidedBy: wholeTool ? BY_RULE : BY_PARTS };
      }
      return ask(`This Bash command needs approval in ${mode} mode: ${judgement.needsApproval}`, suggestion);
    }

    if (isBash) return decideBash(input.command as string);
    const askRule = firstMatch(rules.ask, "deny");
    if (askRule !== undefined) return ask(`${toolName} needs approval (rule ask: ${askRule.raw})`);

    const readOnly = safely(() => tool.isReadOnly(input));
    if (facts.readOnly && !readOnly && !noApproval.has(toolName)) {
      return deny(
        `Plan mode allows only read-only tools, and this ${toolName} call would change things. ` +
          "Finish the plan and ask the user to approve it before making changes.",
        BY_MODE,
      );
    }
    if (facts.approvesEverything) return { behavior: "allow", decidedBy: BY_MODE };
    if (readOnly && typeof input.file_path === "string") {
      const links = hardLinkCount(input.file_path);
      if (links > 1) {
        return ask(
          `${input.file_path} has ${links} hard links, so it may be a file outside the workspace; reading it needs approval`,
          undefined,
          "explained",
        );
      }
    }
    const target = FILE_EDIT_TOOLS.has(toolName) ? editTarget(input) : undefined;
    // R-S10: by the real path (a committed symlink into .git/, a gitfile's git dir, hooksPath …).
    const guarded =
      target === undefined
        ? undefined
        : protectedWriteTarget(target, {
            cwd: matchContext.cwd,
            workspaceRoots: options.workspaceRoots ?? [matchContext.cwd],
            home: matchContext.home,
          });
    if (target !== undefined && guarded !== undefined) {
      const named = rules.allow.some(
        (rule) =>
          rule.specifier?.type === "path" && ruleMatches(rule, toolName, input, "allow", matchContext),
      );
      if (named) return { behavior: "allow", decidedBy: BY_RULE };
      return ask(protectedWriteReason(target, guarded), undefined, "explained");
    }
    if (firstMatch(rules.allow, "allow") !== undefined) return { behavior: "allow", decidedBy: BY_RULE };
    // R-T6: what a network tool sends out is the user's to approve: read-only (plan mode may use
    // it), but asked about unless a rule allows it (WebFetch(domain:…)), as in Claude Code.
    if (NETWORK_TOOLS.has(toolName)) return ask(`${toolName} needs approval in ${mode} mode`);
    // A tool that needs no approval allows itself: Claude Code gives no reason for it.
    if (noApproval.has(toolName)) return { behavior: "allow", decidedBy: BY_CONFIG };
    if (readOnly) return { behavior: "allow", decidedBy: BY_MODE };
    if (facts.approvesEdits && FILE_EDIT_TOOLS.has(toolName))
      return { behavior: "allow", decidedBy: BY_MODE };
    return ask(`${toolName} needs approval in ${mode} mode`);
  };
}

/**
 * Who decided each call (R-K2: Claude Code's `tool_result_meta.permission_decision`): a rule,
 * the mode, a tool that allows itself, a PreToolUse hook, the asker's answer, or nobody (a
 * question no one could answer).
 */
const BY_RULE: PermissionProvenance = { source: "config", reasonType: "rule" };
const BY_MODE: PermissionProvenance = { source: "config", reasonType: "mode" };
const BY_OTHER: PermissionProvenance = { source: "config", reasonType: "other" };
const BY_PARTS: PermissionProvenance = { source: "config", reasonType: "subcommandResults" };
const BY_CONFIG: PermissionProvenance = { source: "config" };
const BY_HOOK: PermissionProvenance = { source: "hook", reasonType: "hook" };
const BY_USER: PermissionProvenance = { source: "user_temporary" };
const BY_USER_REJECT: PermissionProvenance = { source: "user_reject" };
const UNANSWERED: PermissionProvenance = { source: "config", unanswered: true };

/** The file an edit tool writes: `file_path`, or NotebookEdit's `notebook_path`. */
function editTarget(input: Record<string, unknown>): string | undefined {
  const path = input.file_path ?? input.notebook_path;
  return typeof path === "string" ? path : undefined;
}

/** A tool's own predicate must not turn a permission check into a crash. */
function safely(predicate: () => boolean): boolean {
  try {
    return predicate();
  } catch {
    return false;
  }
}

/** The message part that tells the user which rule would allow such a call next time. */
/**
 * R-X1: what Claude Code tells the model about a call that needed approval nobody could give
 * (headless, no one to ask, no PermissionRequest hook deciding): "Claude requested permissions to
 * write to <file>, but you haven't granted it yet." for a file edit, "read from <file>" for a read,
 * "use <tool>" for any other tool. Undefined for Bash, which keeps forkloop's words (why it needs
 * approval and the rule that would allow it; Claude Code says only "This command requires approval").
 */
export function unapprovedCallMessage(
  toolName: string,
  input: Record<string, unknown>,
  cwd: string,
): string | undefined {
  if (toolName === "Bash") return undefined;
  const given = editTarget(input);
  // The file as Claude Code names it: its absolute path.
  const target = given === undefined ? undefined : resolve(cwd, given);
  const what =
    target === undefined
      ? `use ${toolName}`
      : FILE_EDIT_TOOLS.has(toolName)
        ? `write to ${target}`
        : `read from ${target}`;
  return `Claude requested permissions to ${what}, but you haven't granted it yet.`;
}

function howToAllow(
  toolName: string,
  input: Record<string, unknown>,
  cwd: string,
  suggested?: string,
): string {
  let rule = suggested ?? toolName;
  if (suggested !== undefined) {
    // The caller knows the rule (Bash: from the parsed command).
  } else if (toolName === "Bash" && typeof input.command === "string") {
    const words = input.command.trim().split(/\s+/).slice(0, 2).join(" ");
    rule = `Bash(${words}:*)`;
  } else if (typeof input.file_path === "string") {
    rule = `${toolName}(${relative(cwd, input.file_path) || "."})`;
  } else if (toolName === "WebFetch" && typeof input.url === "string" && URL.canParse(input.url)) {
    rule = `WebFetch(domain:${new URL(input.url).hostname})`;
  }
  return `To allow it, add "${rule}" to permissions.allow in .forkloop/settings.json, or choose a more permissive mode (e.g. acceptEdits for file edits).`;
}
