import { type ClaudeFlags, claudeFlagOptions } from "./claude-flags.js";
import type { Options } from "./options.js";
import { OptionsError } from "./options-error.js";

/** A flag's value as extraArgs gives it (`null`: a flag without a value), read as its typed value. */
type Reader = (flag: string, value: string | null) => unknown;

function given(flag: string, value: string | null): string {
  if (value === null) throw new OptionsError(`extraArgs["${flag}"] needs a value, as --${flag} does.`);
  return value;
}

const text: Reader = (flag, value) => {
  if (given(flag, value) === "")
    throw new OptionsError(`extraArgs["${flag}"] needs a value, as --${flag} does.`);
  return value;
};

const on: Reader = () => true;

function number(integer: boolean): Reader {
  return (flag, value) => {
    const parsed = Number(text(flag, value));
    if (!Number.isFinite(parsed) || parsed < 0 || (integer && !Number.isInteger(parsed))) {
      throw new OptionsError(
        `extraArgs["${flag}"] is ${JSON.stringify(value)}: give a non-negative ${integer ? "integer" : "number"}.`,
      );
    }
    return parsed;
  };
}

/** `user,project`, `opus,sonnet`: comma-separated, blanks dropped ("" is none). */
const commaList: Reader = (flag, value) =>
  given(flag, value)
    .split(",")
    .map((item) => item.trim())
    .filter((item) => item !== "");

/** `--allowedTools "Read Bash(git:*)"`: names separated by commas or spaces outside parentheses. */
const toolList: Reader = (flag, value) =>
  ((text(flag, value) as string).match(/[^\s,()]+(?:\([^)]*\))?/g) ?? []).filter((name) => name !== "");

const single: Reader = (flag, value) => [text(flag, value)];

/** Each flag `forkloop run` shares with extraArgs, read from its string into claudeFlagOptions' value. */
const SHARED: Readonly<Record<keyof ClaudeFlags, Reader>> = {
  "json-schema": text,
  "max-turns": number(true),
  "max-budget-usd": number(false),
  model: text,
  "fallback-model": commaList,
  "mcp-config": single,
  "strict-mcp-config": on,
  "setting-sources": commaList,
  settings: text,
  "allowed-tools": toolList,
  "disallowed-tools": toolList,
  "permission-mode": text,
  "dangerously-skip-permissions": on,
  "permission-prompt-tool": text,
  "permission-prompts": (flag, value) => {
    const who = text(flag, value);
    if (who !== "host" && who !== "none")
      throw new OptionsError(`extraArgs["${flag}"] is ${JSON.stringify(value)}: give host or none.`);
    return who;
  },
  autocompact: text,
  tools: given,
  bare: on,
  restricted: on,
  "safe-mode": on,
  "system-prompt": text,
  "append-system-prompt": text,
  agents: text,
  effort: text,
  "session-id": text,
  "fork-session": on,
  "add-dir": single,
  "include-partial-messages": on,
  "include-hook-events": on,
  "replay-user-messages": on,
  "forward-subagent-text": on,
};

/** The flags only a query reads this way (the CLI resolves them itself: the session, the agent). */
const QUERY_ONLY: Readonly<Record<string, (value: string | null, flag: string) => Partial<Options>>> = {
  resume: (value, flag) => ({ resume: text(flag, value) as string }),
  continue: () => ({ continue: true }),
  agent: (value, flag) => ({ agent: text(flag, value) as string }),
  "no-session-persistence": () => ({ persistSession: false }),
  // The output flag the Agent SDK itself passes: a query's messages are always these.
  verbose: () => ({}),
};

const ALIASES: Readonly<Record<string, string>> = {
  allowedTools: "allowed-tools",
  disallowedTools: "disallowed-tools",
};

/** The flags forkloop reads from `extraArgs`, for messages and the README. */
const EXTRA_ARGS_FLAGS: readonly string[] = [...Object.keys(SHARED), ...Object.keys(QUERY_ONLY)];

/** The options whose values a flag adds to rather than replaces (`--mcp-config` beside `mcpConfig`). */
const LISTS = ["mcpConfig", "allowedTools", "disallowedTools", "additionalDirectories"] as const;

/**
 * `options` with its `extraArgs` read as the Claude Code CLI flags they are (the Agent SDK appends
 * them to Claude Code's command line; a leading `--` is allowed), through the mapping `forkloop
 * run` uses (claudeFlagOptions), relative paths against `options.cwd`. A flag wins over its option,
 * as the later flag does on a command line; a flag forkloop does not support is an OptionsError
 * naming it — never silently dropped.
 */
export function withExtraArgs(options: Options): Options {
  const extraArgs = options.extraArgs;
  if (extraArgs === undefined) return options;
  const { extraArgs: _read, ...rest } = options;
  const unsupported = Object.keys(extraArgs).filter(
    (flag) => !(canonical(flag) in SHARED) && !(canonical(flag) in QUERY_ONLY),
  );
  if (unsupported.length > 0) {
    throw new OptionsError(
      `extraArgs: forkloop does not support ${unsupported.map((flag) => `--${flag.replace(/^--/, "")}`).join(", ")}; the flags it reads are --${EXTRA_ARGS_FLAGS.join(", --")} (or set the matching option).`,
    );
  }
  const flags: Record<string, unknown> = {};
  let queryOnly: Partial<Options> = {};
  for (const [raw, value] of Object.entries(extraArgs)) {
    const flag = canonical(raw);
    const read = SHARED[flag as keyof ClaudeFlags];
    if (read === undefined) queryOnly = { ...queryOnly, ...QUERY_ONLY[flag]?.(value, flag) };
    else {
      const typed = read(flag, value);
      const before = flags[flag];
      flags[flag] = Array.isArray(before) && Array.isArray(typed) ? [...before, ...typed] : typed;
    }
  }
  // The Agent SDK runs Claude Code with --output-format stream-json.
  const mapped = claudeFlagOptions(flags as ClaudeFlags, {
    cwd: options.cwd ?? process.cwd(),
    outputFormat: "stream-json",
  });
  const lists: Partial<Options> = {};
  for (const key of LISTS) {
    const added = mapped[key];
    if (added !== undefined) lists[key] = [...(options[key] ?? []), ...added];
  }
  return { ...rest, ...mapped, ...lists, ...queryOnly };
}

function canonical(flag: string): string {
  const bare = flag.replace(/^--/, "");
  return ALIASES[bare] ?? bare;
}
