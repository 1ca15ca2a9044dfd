import { HOOK_EVENTS } from "@forkloop/sdk";
import type { Script } from "../support/script.js";

/**
 * A CLI scenario: one command line run as `claude <args>` (the real Claude Code CLI) and as
 * `forkloop <args>` — the same words, since `forkloop -p …` is meant as a drop-in — in
 * directories of their own, against the same scripted server.
 *
 * Placeholders in args, stdin, files and env values: `{work}` (the working directory), `{home}`,
 * `{root}` (the run's directory), `{session}` (the session id the previous step printed).
 */
export interface CliScenario {
  /** One line: what the scenario exercises (the test title). */
  what: string;
  /** The command line after the program's name. */
  args: readonly string[];
  /** Runs before `args`, in the same directories (a session to resume); their exit codes are compared. */
  before?: readonly CliStep[];
  /** Only on one side: kept to what a user switching over would add (forkloop's `--trust-project`). */
  forkloopArgs?: readonly string[];
  stdin?: string;
  /** Files written into the working directory before the first step. */
  files?: Readonly<Record<string, string>>;
  /**
   * The working directory is a git repository with `files` committed (one commit, the same id on
   * both sides); the worktrees and branches after the run are compared.
   */
  git?: boolean;
  /** Files written under the run's home (`.claude/settings.json` is the user's settings on both sides). */
  home?: Readonly<Record<string, string>>;
  /** Added to the isolated environment; `null` removes a variable (`ANTHROPIC_API_KEY`); `{apiKey}` is the run's key. */
  env?: Readonly<Record<string, string | null>>;
  /** The scripted model; a factory when it keeps state (each side gets its own). */
  script: Script | (() => Script);
  /** Texts the command line puts into a system prompt: whether each role's system prompt holds each is compared. */
  systemTexts?: readonly string[];
  /**
   * Texts that must reach the model somewhere in the first main request (system prompt, a user
   * message, a reminder): whether each side's holds each is compared.
   */
  requestTexts?: readonly string[];
  /**
   * Texts that must reach the model by the last main request (a hook's context after a tool
   * batch): where each side's holds each — system prompt, a system message, a user message — is
   * compared.
   */
  lastRequestTexts?: readonly string[];
  /** As `lastRequestTexts`, in the sub-agents' last request (a SubagentStart hook's context). */
  subAgentLastRequestTexts?: readonly string[];
  /** API betas the command line asks for: whether each side's first main request's `anthropic-beta` holds each is compared. */
  betas?: readonly string[];
  /** Spawn the built forkloop instead of running it in-process: the process itself is the subject. */
  spawn?: boolean;
  /** Default 120 s. */
  timeoutMs?: number;
}

export interface CliStep {
  args: readonly string[];
  stdin?: string;
}

export function scriptOf(scenario: CliScenario): Script {
  return typeof scenario.script === "function" ? scenario.script() : scenario.script;
}

/**
 * User settings whose command hooks record every input they get, one file per call under the
 * run's `hooks/` directory (named by time, so they sort in the order they ran).
 */
export function hookLogSettings(events: readonly string[], extra: Record<string, unknown> = {}): string {
  const hook = { type: "command", command: 'cat > "{root}/hooks/$(date +%s%N)-$$.json"' };
  return JSON.stringify({
    ...extra,
    hooks: Object.fromEntries(events.map((event) => [event, [{ hooks: [hook] }]])),
  });
}

/** Every hook event Claude Code 2.1.332 knows (the Agent SDK's HOOK_EVENTS, which the agent-sdk harness checks against the real SDK's). */
export const CLAUDE_CODE_HOOK_EVENTS = HOOK_EVENTS;

/**
 * A one-turn run whose request the API answers with the error `status`, a hook for every event
 * Claude Code knows logged: the result, the text shown and StopFailure's input. With
 * `streamJson`, the assistant line's error and the retries' lines are compared too; `retries`
 * bounds both sides' retries (Claude Code's CLAUDE_CODE_MAX_RETRIES, which forkloop reads).
 */
export function apiErrorScenario(
  what: string,
  status: `${number}`,
  options: { readonly streamJson?: boolean; readonly retries?: number } = {},
): CliScenario {
  const format = options.streamJson === true ? ["stream-json", "--verbose"] : ["json"];
  return {
    what,
    args: ["-p", "Say hello.", "--output-format", ...format],
    home: { ".claude/settings.json": hookLogSettings(CLAUDE_CODE_HOOK_EVENTS) },
    ...(options.retries === undefined ? {} : { env: { CLAUDE_CODE_MAX_RETRIES: String(options.retries) } }),
    script: { main: () => ({ content: [{ type: "text", text: "unused" }], fault: status }) },
  };
}
