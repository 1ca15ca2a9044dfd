import { dirname, resolve } from "node:path";
import type { PromptExpansion } from "@forkloop/loop-core";
import { customCommandPrompt, findCustomCommand, isProjectTrusted } from "@forkloop/tools";
import { OptionsError } from "./options-error.js";
import { SLASH_COMMANDS } from "./slash-commands.js";

/** What a custom slash command turns the run into: its prompt, and what its frontmatter adds. */
export interface ExpandedCommand {
  readonly prompt: string;
  /** The command as typed, for the prompt hooks (query's `promptExpansion`). */
  readonly expansion: PromptExpansion;
  readonly allowedTools: readonly string[];
  readonly model?: string;
}

const SLASH = /^\/([A-Za-z0-9][\w:-]*)(?=\s|$)\s*([\s\S]*)$/;

/** Whether a prompt's first word reads as a slash command (a path like `/tmp/a.txt` does not). */
function startsWithSlashCommand(prompt: string): boolean {
  const match = SLASH.exec(prompt.trim());
  return match !== null && !(match[1] ?? "").includes("/");
}

/**
 * R-X1: `forkloop -p "/name args"` runs the custom command `.claude/commands/name.md` (or
 * `.forkloop/commands/`, the project's or the user's) as Claude Code does. `/compact` stays
 * forkloop's own; a name no command has is exit 2 naming where commands are read from. A project
 * command's `allowed-tools` widen permissions, so they apply only in a trusted project (R-S5).
 * With `disabled` (--disable-slash-commands) nothing is expanded: the prompt goes to the model as
 * written (query()'s `slashCommands: false`), as Claude Code sends it. With `safeMode` no command
 * file is read; a prompt that still reads as a custom command is refused, since query() would read
 * it as one.
 */
export function expandSlashCommand(
  prompt: string,
  options: {
    cwd: string;
    projectRoot: string;
    home: string | undefined;
    trustProject: boolean;
    disabled?: boolean | undefined;
    safeMode?: boolean | undefined;
  },
  notice: (line: string) => void,
): ExpandedCommand | undefined {
  if (options.disabled) return undefined;
  // --safe-mode: command files are customizations, as in Claude Code; /compact stays.
  if (options.safeMode) {
    const builtIn = prompt.trim().split(/\s/)[0] === "/compact";
    if (!startsWithSlashCommand(prompt) || builtIn) return undefined;
    throw new OptionsError(
      "--safe-mode: custom commands (.claude/commands, .forkloop/commands) are off; drop --safe-mode to run one, or put a word before the /name.",
    );
  }
  const match = SLASH.exec(prompt.trim());
  if (!match) return undefined;
  const [, name = "", args = ""] = match;
  if (name === "compact" || name.includes("/")) return undefined;
  const lookup = findCustomCommand(name, {
    projectDirs: directoriesFrom(options.projectRoot, options.cwd),
    ...(options.home === undefined ? {} : { home: options.home }),
  });
  // The reader's line starts with its own "forkloop: ", and the CLI adds the program's name again.
  if (lookup.status === "refused")
    throw new OptionsError(`run: /${name}: ${lookup.message.replace(/^forkloop: /, "")}`);
  if (lookup.status === "missing") {
    throw new OptionsError(
      `run: unknown slash command /${name}. Built in: ${SLASH_COMMANDS.join(", ")}; custom commands are read from .claude/commands/${name.replaceAll(":", "/")}.md or .forkloop/commands/ (the project's or ~/). To send a prompt that starts with a slash, put a word before it.`,
    );
  }
  const { command } = lookup;
  const trusted =
    command.scope === "user" ||
    options.trustProject ||
    (options.home !== undefined && isProjectTrusted(options.projectRoot, options.home));
  if (!trusted && command.allowedTools.length > 0) {
    notice(
      `forkloop: ${command.path}: ignored allowed-tools (${command.allowedTools.join(", ")}) — the project is not trusted; run \`forkloop trust ${options.projectRoot}\` or pass --trust-project to use them.\n`,
    );
  }
  return {
    prompt: customCommandPrompt(command, args),
    expansion: {
      expansionType: "slash_command",
      typedPrompt: prompt,
      commandName: name,
      commandArgs: args,
      // Claude Code's names for where a command was read from.
      commandSource: command.scope === "user" ? "userSettings" : "projectSettings",
    },
    allowedTools: trusted ? command.allowedTools : [],
    ...(command.model === undefined ? {} : { model: command.model }),
  };
}

/** The project root down to cwd (outermost first), as memory files and skills are read. */
function directoriesFrom(root: string, cwd: string): string[] {
  const chain = [resolve(cwd)];
  let current = resolve(cwd);
  while (current !== resolve(root)) {
    const parent = dirname(current);
    if (parent === current) return [resolve(cwd)];
    current = parent;
    chain.push(current);
  }
  return chain.reverse();
}
