import { DEFAULT_MODEL, SLASH_COMMANDS } from "@forkloop/sdk";
import { checkClaudeFlagValues } from "@forkloop/sdk/internal";
import { z } from "zod";
import { budgetUsdSchema, toolListSchema } from "../agent-options.js";
import { refuseClaudeCodeFlags } from "../claude-code-flags.js";
import { joinOptionalValues } from "../claude-flag-values.js";
import { CliError } from "../cli-error.js";
import { type ParsedCommand, parseCommand } from "../flags.js";
import { LOOP_FLAG_OPTIONS, LOOP_FLAGS_USAGE, loopFlagsSchema } from "../loop-flags.js";
import { spreadMcpConfigArgs } from "../mcp-config-args.js";
import { TIMEOUT_FLAG_OPTIONS, TIMEOUT_FLAG_SCHEMAS, TIMEOUT_FLAGS_USAGE } from "../model-timeouts.js";
import { sandboxFlagSchema } from "../sandbox-flag.js";
import { parseTokenBudget } from "../token-budget-flag.js";
import { joinVariadicArgs, spreadVariadicArgs } from "../variadic-args.js";

export const RUN_USAGE = `Usage: forkloop run ["<prompt>"] [flags]      (also: forkloop -p "<prompt>" [flags])

One headless agent run, like \`claude -p\`. The prompt is the arguments; piped stdin is appended
to it (\`cat log | forkloop run "explain"\`), or is the prompt when there are no arguments. The
session is saved per project (the git root, else the directory) in
$FORKLOOP_HOME/projects/<project>/sessions/ (FORKLOOP_HOME defaults to ~/.forkloop).

  --output-format F       text (default: the final answer) | json (one result object) |
                          stream-json (one JSON object per line: system/init, assistant, user,
                          system/api_retry, system/compact_boundary, system/task_*, result)
  --input-format F        text (default) | stream-json: user messages as JSON lines on stdin
                          ({"type":"user","message":{"role":"user","content":…}}), one turn each
  --include-partial-messages  with --output-format stream-json: also the raw stream events
  --include-hook-events   with --output-format stream-json: also each hook command's run
                          (system/hook_started, system/hook_response)
  --forward-subagent-text with stream-json: a sub-agent's text and thinking too (by default only
                          its tool calls and results), parent_tool_use_id set
  --replay-user-messages  with both formats stream-json: each stdin user message is printed back
                          (isReplay: true) when its turn takes it
  --verbose               with text output: tool calls and retries on stderr
  --model NAME            model id or alias: opus, sonnet, haiku (the newest of each), a
                          [1m] suffix is accepted (default ${DEFAULT_MODEL})
  --fallback-model NAME   switch to this model when the primary stays overloaded (repeatable)
  --max-turns N           stop after N turns (exit code 3)
  --max-budget-usd N      stop the run once its cost reaches N US dollars (exit code 10)
  --system-prompt TEXT    replace the system prompt (--system-prompt-file FILE: from a file)
  --append-system-prompt TEXT  appended to the system prompt (--append-system-prompt-file FILE)
  --tools LIST            the built-in tools offered: "Read,Grep", "" for none, "default" for all
  --agent NAME            the main session runs as this agent type (from --agents or
                          .claude/agents): its prompt, its tools, its model
  --agents JSON|FILE      custom agent types the model may call ({"name":{"description","prompt",
                          "tools","model"}}), beside .claude/agents/*.md
  --json-schema SCHEMA    the final answer is JSON matching this JSON Schema (structured_output
                          in the json result)
  --effort LEVEL          low | medium | high | xhigh | max: the requests' effort
  --betas BETA…           API betas in every request's anthropic-beta header: as in Claude Code
                          context-1m-2025-08-07 (another is a warning and left out;
                          ANTHROPIC_BETAS adds any beta)
  --bare                  minimal: no CLAUDE.md/AGENTS.md in the system prompt, no settings hooks,
                          the tools Bash, Edit and Read (unless --tools); settings still apply
  --safe-mode             every customization off: no CLAUDE.md, settings hooks, skills, agent or
                          command files, discovered MCP servers; tools and permissions as usual
  --restricted            no Bash or WebFetch (unless --tools names them), no settings files but
                          --settings, no CLAUDE.md; bypassPermissions is refused
  --setting-sources LIST  which settings files to read: user,project,local (default all; "" none)
  --session-id UUID       the new session's id (with --resume/--continue only with --fork-session)
  --fork-session          with --resume/--continue: continue in a new session, the old one kept
  -n, --name NAME         the session's display name (forkloop sessions list)
  --no-session-persistence  keep nothing on disk: the session cannot be resumed
  -d, --debug [FILTER]    tool calls, retries and compactions in <forkloop home>/debug/<session>.txt
                          (--debug-file FILE: there), as Claude Code's ~/.claude/debug
  --disable-slash-commands  the prompt goes to the model as written (a leading /name too)
  --permission-mode M     default | acceptEdits | plan | bypassPermissions | dontAsk | auto
                          (default: default — reads run; writes and commands need an allow rule)
  --dangerously-skip-permissions  the same as --permission-mode bypassPermissions
  --permission-prompt-tool NAME  an MCP tool (mcp__server__tool, from --mcp-config) answers what
                          the rules and the mode leave open: {tool_name, input, tool_use_id} in,
                          {"behavior":"allow","updatedInput":…} or {"behavior":"deny","message":…}
  --permission-prompts none  nobody answers, not even that tool: what would prompt is denied
  --autocompact N         auto-compact as if the window were N tokens (at least 100k; 500k, 200 =
                          200k), when smaller than the model's; auto (default): the model's window
  --allowed-tools LIST    allow rules, comma-separated or several after one flag (as in Claude Code):
                          Edit, Bash(npm test:*), Write(src/**), mcp__server (every tool of an
                          MCP server), mcp__server__tool …
  --disallowed-tools LIST deny rules; a bare tool name also removes the tool (e.g. Bash, mcp__db,
                          or Agent / Task / Skill: no sub-agents)
  --mcp-config FILE…      MCP servers from files (or JSON strings) {"mcpServers": {…}}: several after
                          one flag (*.json or {…}, as in Claude Code), or the flag repeated;
                          also read: .mcp.json (trusted projects), mcpServers in settings, ~/.claude.json
  --strict-mcp-config     only the --mcp-config servers
  --add-dir DIR           let the file tools work in DIR too (repeatable; it must exist)
  --sandbox MODE          Bash in bubblewrap: auto | on | off (default: auto with dontAsk, else off)
  --settings FILE|JSON    one more settings file, or the settings as JSON ('{"model":"opus"}'):
                          read last (it wins) and trusted, as the user's own files
  --trust-project         use this project's own settings as they are for this run (allow rules,
                          hooks, env, a wider mode); without it, or \`forkloop trust\`, they only narrow
  --cwd DIR               the project to work in (default: the current directory)
  -w, --worktree [NAME]   work in a new git worktree <repo>/.claude/worktrees/NAME on a new
                          branch worktree-NAME, from the remote's default branch (else HEAD;
                          settings' worktree.baseRef "head": HEAD); a made-up name without NAME;
                          an existing one is reused; it is kept
  --state-dir DIR         keep the session there instead (<cwd>/.forkloop only when forkloop made them)
  --budget TOKENS         a token budget for the turn, e.g. +500k (R-L14)
${LOOP_FLAGS_USAGE}
  -r, --resume SESSION    continue a saved session with this prompt
  -c, --continue          continue the project's most recent session
  --repair                with --resume: a damaged transcript keeps its intact records (the
                          damaged file is moved aside), then the session continues
  --report                write the session's HTML report at the end and print its path (stderr);
                          without it the command that writes and opens it is printed
${TIMEOUT_FLAGS_USAGE}

Slash commands (the prompt's first word): /name args runs a custom command,
.claude/commands/name.md or .forkloop/commands/name.md (the project's, then ~/.claude/commands);
${SLASH_COMMANDS.join(", ")} — with --resume, compacts the session now (one summary request, no
model turn); instructions steer the summary.

Exit codes: 0 completed, 3 max turns, 4 model error, 5 stopped by a hook, 8 context limit,
10 --max-budget-usd reached, 130 interrupted, 143 SIGTERM, 129 SIGHUP, 131 SIGQUIT,
2 bad flags or a refused key, unknown model or wrong endpoint (fix, then resume).
Ctrl+C once interrupts cleanly (transcript stays consistent), twice exits at once.`;

/** An API beta's name: `context-1m-2025-08-07`, `interleaved-thinking-2025-05-14`. */
const BETA_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * A further value of `--betas <betas...>`: dated beta names (`name-YYYY-MM-DD`, comma-separated
 * or not), so a prompt after the list stays the prompt.
 */
function isBetaList(arg: string): boolean {
  return arg.split(",").every((beta) => /^[a-z0-9][a-z0-9-]*-\d{4}-\d{2}-\d{2}$/i.test(beta.trim()));
}

/**
 * A further value of `--allowedTools <tools...>` / `--disallowedTools <tools...>`: rules (a tool's
 * capitalised name or an MCP rule, each with an optional `(specifier)`), comma-separated or not,
 * so a prompt after the list stays the prompt.
 */
function isRuleList(arg: string): boolean {
  return arg.split(",").every((rule) => /^(?:[A-Z][\w-]*|mcp__[\w-]+)(?:\(.*\))?$/s.test(rule.trim()));
}

const schema = z.object({
  help: z.boolean().optional(),
  print: z.boolean().optional(),
  "output-format": z
    .enum(["text", "json", "stream-json"], { message: "must be text, json or stream-json" })
    .optional(),
  "input-format": z.enum(["text", "stream-json"], { message: "must be text or stream-json" }).optional(),
  "include-partial-messages": z.boolean().optional(),
  "include-hook-events": z.boolean().optional(),
  bare: z.boolean().optional(),
  restricted: z.boolean().optional(),
  "safe-mode": z.boolean().optional(),
  "replay-user-messages": z.boolean().optional(),
  "forward-subagent-text": z.boolean().optional(),
  model: z.string().min(1, "give a model id or alias, e.g. --model sonnet").optional(),
  // Repeated, or comma-separated as Claude Code takes it.
  "fallback-model": z
    .array(z.string().min(1))
    .transform((models) => models.flatMap((model) => model.split(",").map((m) => m.trim())).filter(Boolean))
    .optional(),
  "max-turns": z
    .string()
    .regex(/^\d+$/, "must be a whole number, e.g. --max-turns 10")
    .transform(Number)
    .refine((value) => value >= 1, "must be at least 1")
    .optional(),
  "max-budget-usd": budgetUsdSchema.optional(),
  "system-prompt": z.string().min(1, 'give the prompt, e.g. --system-prompt "You review code."').optional(),
  "append-system-prompt": z.string().optional(),
  "system-prompt-file": z.string().min(1, "give a file, e.g. --system-prompt-file prompt.txt").optional(),
  "append-system-prompt-file": z
    .string()
    .min(1, "give a file, e.g. --append-system-prompt-file extra.txt")
    .optional(),
  tools: z.string().optional(),
  agents: z.string().min(1, `give JSON or a file, e.g. --agents '{"reviewer":{…}}'`).optional(),
  agent: z.string().min(1, "give an agent type, e.g. --agent reviewer").optional(),
  "json-schema": z.string().min(1, 'give a JSON Schema, e.g. --json-schema \'{"type":"object"}\'').optional(),
  // --effort, --permission-mode and --setting-sources values are checked by the mapping extraArgs
  // shares (checkClaudeFlagValues), so both refuse a bad one in the same words (R-X3, R-K2).
  effort: z.string().optional(),
  betas: z
    .array(z.string())
    .transform((lists) => lists.flatMap((list) => list.split(",").map((beta) => beta.trim())))
    .pipe(
      z
        .array(z.string().regex(BETA_NAME, "give beta names, e.g. --betas context-1m-2025-08-07"))
        .min(1, "give beta names, e.g. --betas context-1m-2025-08-07"),
    )
    .optional(),
  "setting-sources": z
    .string()
    .transform((text) =>
      text
        .split(",")
        .map((source) => source.trim())
        .filter((source) => source !== ""),
    )
    .optional(),
  "session-id": z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be a valid UUID")
    .optional(),
  "fork-session": z.boolean().optional(),
  "permission-prompt-tool": z
    .string()
    .min(1, "give an MCP tool, e.g. --permission-prompt-tool mcp__approver__approve")
    .optional(),
  name: z.string().trim().min(1, 'give a name, e.g. --name "nightly review"').optional(),
  "no-session-persistence": z.boolean().optional(),
  debug: z.string().optional(),
  "debug-file": z.string().min(1, "give a file, e.g. --debug-file debug.log").optional(),
  "disable-slash-commands": z.boolean().optional(),
  version: z.boolean().optional(),
  // Read and without effect in a headless run, as in Claude Code's -p: bypassPermissions is
  // allowed either way, the output has no decorations, Chrome is off, and with no host to ask,
  // a permission prompt is denied.
  "allow-dangerously-skip-permissions": z.boolean().optional(),
  "ax-screen-reader": z.boolean().optional(),
  "no-chrome": z.boolean().optional(),
  // none: not even --permission-prompt-tool is asked (without one, nobody is asked either way).
  "permission-prompts": z.enum(["host", "none"], { message: "must be host or none" }).optional(),
  // auto, or a window of at least 100k tokens: read by claudeFlagOptions (autoCompactWindowFlag).
  autocompact: z.string().optional(),
  // Claude Code's choices; the flag alone (an empty value here) is its preset, true.
  "prompt-suggestions": z
    .enum(["", "true", "1", "yes", "on", "false", "0", "no", "off"], {
      message: "must be true or false (1 or 0, yes or no, on or off)",
    })
    .transform((value) => ["", "true", "1", "yes", "on"].includes(value))
    .optional(),
  "permission-mode": z.string().optional(),
  "dangerously-skip-permissions": z.boolean().optional(),
  "allowed-tools": toolListSchema.optional(),
  "disallowed-tools": toolListSchema.optional(),
  "mcp-config": z.array(z.string().min(1, "give a file, e.g. --mcp-config mcp.json")).optional(),
  "strict-mcp-config": z.boolean().optional(),
  "add-dir": z.array(z.string().min(1, "give a directory, e.g. --add-dir ../shared")).optional(),
  settings: z.string().min(1, `give a file or JSON, e.g. --settings '{"model":"opus"}'`).optional(),
  "trust-project": z.boolean().optional(),
  sandbox: sandboxFlagSchema.optional(),
  cwd: z.string().min(1).optional(),
  // The name is checked where the worktree is made (openSessionWorktree); "" is a made-up one.
  worktree: z.string().optional(),
  "state-dir": z.string().min(1, "give a directory, e.g. --state-dir ~/forkloop-state").optional(),
  budget: z
    .string()
    .transform((text, ctx) => {
      const parsed = parseTokenBudget(text);
      if (parsed.ok) return parsed.tokens;
      ctx.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    })
    .optional(),
  resume: z.string().min(1).optional(),
  continue: z.boolean().optional(),
  repair: z.boolean().optional(),
  verbose: z.boolean().optional(),
  report: z.boolean().optional(),
  ...TIMEOUT_FLAG_SCHEMAS,
  ...loopFlagsSchema,
});
export type RunFlags = z.infer<typeof schema>;

/** `forkloop run`'s flags, with Claude Code's spellings (`-p`, `-c`, `-r`, camelCase aliases). */
export function parseRunFlags(argv: readonly string[]): ParsedCommand<RunFlags> {
  refuseClaudeCodeFlags(argv);
  const parsed = parseCommand(
    {
      command: "run",
      usage: RUN_USAGE,
      schema,
      options: {
        help: { type: "boolean", short: "h" },
        // `forkloop run -p "…"` as `claude -p "…"`: headless is all `run` does.
        print: { type: "boolean", short: "p" },
        "output-format": { type: "string" },
        "input-format": { type: "string" },
        "include-partial-messages": { type: "boolean" },
        "include-hook-events": { type: "boolean" },
        bare: { type: "boolean" },
        restricted: { type: "boolean" },
        "safe-mode": { type: "boolean" },
        "replay-user-messages": { type: "boolean" },
        "forward-subagent-text": { type: "boolean" },
        model: { type: "string" },
        "fallback-model": { type: "string", multiple: true },
        "max-turns": { type: "string" },
        "max-budget-usd": { type: "string" },
        "system-prompt": { type: "string" },
        "append-system-prompt": { type: "string" },
        "system-prompt-file": { type: "string" },
        "append-system-prompt-file": { type: "string" },
        tools: { type: "string" },
        agents: { type: "string" },
        agent: { type: "string" },
        "json-schema": { type: "string" },
        effort: { type: "string" },
        betas: { type: "string", multiple: true },
        "setting-sources": { type: "string" },
        "session-id": { type: "string" },
        "fork-session": { type: "boolean" },
        "permission-prompt-tool": { type: "string" },
        name: { type: "string", short: "n" },
        "no-session-persistence": { type: "boolean" },
        debug: { type: "string" },
        "debug-file": { type: "string" },
        "disable-slash-commands": { type: "boolean" },
        version: { type: "boolean", short: "v" },
        "allow-dangerously-skip-permissions": { type: "boolean" },
        "ax-screen-reader": { type: "boolean" },
        "no-chrome": { type: "boolean" },
        "permission-prompts": { type: "string" },
        autocompact: { type: "string" },
        "prompt-suggestions": { type: "string" },
        "permission-mode": { type: "string" },
        "dangerously-skip-permissions": { type: "boolean" },
        "allowed-tools": { type: "string" },
        "disallowed-tools": { type: "string" },
        "add-dir": { type: "string", multiple: true },
        "mcp-config": { type: "string", multiple: true },
        "strict-mcp-config": { type: "boolean" },
        settings: { type: "string" },
        "trust-project": { type: "boolean" },
        sandbox: { type: "string" },
        cwd: { type: "string" },
        worktree: { type: "string", short: "w" },
        "state-dir": { type: "string" },
        budget: { type: "string" },
        resume: { type: "string", short: "r" },
        continue: { type: "boolean", short: "c" },
        repair: { type: "boolean" },
        verbose: { type: "boolean" },
        report: { type: "boolean" },
        ...TIMEOUT_FLAG_OPTIONS,
        ...LOOP_FLAG_OPTIONS,
      },
    },
    joinOptionalValues(
      spreadVariadicArgs(
        spreadMcpConfigArgs(
          ["--allowed-tools", "--disallowed-tools"].reduce(
            (args, flag) => joinVariadicArgs(args, flag, isRuleList),
            argv.map((arg) => CLAUDE_SPELLINGS[arg] ?? arg),
          ),
        ),
        "--betas",
        isBetaList,
      ),
    ),
  );
  checkClaudeFlagValues(parsed.flags);
  checkCombinations(parsed.flags);
  return parsed;
}

/** Claude Code's camelCase spellings of the same flags. */
const CLAUDE_SPELLINGS: Readonly<Record<string, string>> = {
  "--allowedTools": "--allowed-tools",
  "--disallowedTools": "--disallowed-tools",
};

/** Flags that only mean something together: refused with the fix, before anything starts. */
function checkCombinations(flags: RunFlags): void {
  if (flags["include-partial-messages"] && flags["output-format"] !== "stream-json") {
    throw new CliError(
      "--include-partial-messages only applies to --output-format stream-json (the raw stream events are stream-json lines); add --output-format stream-json or drop it.",
    );
  }
  if (
    flags["replay-user-messages"] &&
    (flags["input-format"] !== "stream-json" || flags["output-format"] !== "stream-json")
  ) {
    throw new CliError(
      "--replay-user-messages requires both --input-format stream-json and --output-format stream-json (it echoes stdin's JSON user messages as stream-json lines); add them or drop it.",
    );
  }
  if (flags["input-format"] === "stream-json" && flags["output-format"] !== "stream-json") {
    throw new CliError(
      "--input-format stream-json needs --output-format stream-json (each input turn answers as stream-json lines); add --output-format stream-json.",
    );
  }
  if (
    flags.restricted &&
    (flags["dangerously-skip-permissions"] || flags["permission-mode"] === "bypassPermissions")
  ) {
    throw new CliError(
      "--restricted: bypassPermissions is not supported in restricted mode (as in Claude Code); pick another --permission-mode, e.g. acceptEdits, or dontAsk with --allowed-tools rules.",
    );
  }
  if (flags.resume !== undefined && flags.continue) {
    throw new CliError("give either --resume SESSION or --continue (the most recent session), not both.");
  }
  const resuming = flags.resume !== undefined || flags.continue === true;
  if (flags["fork-session"] && !resuming) {
    throw new CliError(
      "--fork-session applies to --resume SESSION or --continue (it forks that session); add one or drop it.",
    );
  }
  if (flags["session-id"] !== undefined && resuming) {
    throw new CliError(
      "--session-id names a new session; a resumed session keeps its id and forkloop gives a fork (--fork-session) a new one. Drop --session-id.",
    );
  }
  if (flags["no-session-persistence"] && resuming) {
    throw new CliError(
      "--no-session-persistence: forkloop writes a resumed session's new turns to its transcript; drop --no-session-persistence or start a new session.",
    );
  }
  for (const [text, file] of [
    ["system-prompt", "system-prompt-file"],
    ["append-system-prompt", "append-system-prompt-file"],
  ] as const) {
    if (flags[text] !== undefined && flags[file] !== undefined) {
      throw new CliError(`give either --${text} or --${file}, not both.`);
    }
  }
  if (
    flags["dangerously-skip-permissions"] &&
    flags["permission-mode"] !== undefined &&
    flags["permission-mode"] !== "bypassPermissions"
  ) {
    throw new CliError(
      `--dangerously-skip-permissions is --permission-mode bypassPermissions; it contradicts --permission-mode ${flags["permission-mode"]}. Drop one of them.`,
    );
  }
}
