import { homedir } from "node:os";
import { resolve } from "node:path";
import { trustProjectDirectory } from "@forkloop/tools";
import { z } from "zod";
import { CliError } from "../cli-error.js";
import type { CommandContext } from "../command-context.js";
import { EXIT, type ExitCode } from "../exit-codes.js";
import { parseCommand } from "../flags.js";

const TRUST_USAGE = `Usage: forkloop trust [DIR]      (default: the current directory)

Trusts a project (R-S5): its own settings files (.forkloop/ and .claude/ settings.json and
settings.local.json) may then widen permissions — allow rules, a wider defaultMode,
additionalDirectories outside it, hooks, env. Untrusted, they may only narrow them (deny and ask
rules, a stricter mode), and what was ignored is named on stderr. Recorded in
~/.forkloop/trusted-projects.json; \`--trust-project\` trusts a project for one run.`;

const schema = z.object({ help: z.boolean().optional() });

export async function trustCommand(argv: readonly string[], context: CommandContext): Promise<ExitCode> {
  const { flags, positionals } = parseCommand(
    { command: "trust", usage: TRUST_USAGE, schema, options: { help: { type: "boolean", short: "h" } } },
    argv,
  );
  if (flags.help) {
    context.stdout.write(`${TRUST_USAGE}\n`);
    return EXIT.ok;
  }
  if (positionals.length > 1)
    throw new CliError(`forkloop trust takes one directory (got ${positionals.length}).\n\n${TRUST_USAGE}`);
  const dir = resolve(context.cwd, positionals[0] ?? ".");
  const recorded = trustProjectDirectory(dir, context.env.HOME ?? homedir());
  if (!recorded.ok) throw new CliError(recorded.error);
  context.stdout.write(`trusted ${recorded.project} (recorded in ${recorded.file})\n`);
  return EXIT.ok;
}
