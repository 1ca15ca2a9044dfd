import { type ParseArgsConfig, parseArgs } from "node:util";
import { closestName } from "@forkloop/loop-core";
import type { z } from "zod";
import { CliError } from "./cli-error.js";

type ParseArgsOptionsConfig = NonNullable<ParseArgsConfig["options"]>;

/** What a command accepts: node's parseArgs option table plus a zod schema of the parsed values. */
export interface CommandSpec<Schema extends z.ZodType> {
  readonly command: string;
  readonly options: ParseArgsOptionsConfig;
  /** Keys are the long flag names (`output-format`), so an issue path names the flag. */
  readonly schema: Schema;
  readonly usage: string;
}

export interface ParsedCommand<T> {
  readonly flags: T;
  readonly positionals: readonly string[];
  /** The flags as given, before the schema (strings, booleans, lists): what a batch stores (R-R7). */
  readonly given: GivenFlags;
}

/** Flag values as parseArgs reads them off the command line. */
export type GivenFlags = Readonly<Record<string, string | boolean | (string | boolean)[]>>;

/**
 * Parses and validates a command's argv. Every failure becomes a CliError (exit 2) whose message
 * names the flag, what is wrong and how to fix it — never a stack trace.
 */
export function parseCommand<Schema extends z.ZodType>(
  spec: CommandSpec<Schema>,
  argv: readonly string[],
): ParsedCommand<z.infer<Schema>> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: [...argv], options: spec.options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliError(`${describeParseError(spec, error)}\n\n${spec.usage}`);
  }
  const given = Object.fromEntries(
    Object.entries(parsed.values).filter(([, value]) => value !== undefined),
  ) as GivenFlags;
  return { flags: checkFlagValues(spec, given), positionals: parsed.positionals, given };
}

/** Validates flag values (given now, or stored and given again) against the command's schema. */
export function checkFlagValues<Schema extends z.ZodType>(
  spec: Pick<CommandSpec<Schema>, "command" | "schema">,
  values: GivenFlags,
): z.infer<Schema> {
  const result = spec.schema.safeParse(values);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const flag = issue.path.length > 0 ? `--${String(issue.path[0])}` : spec.command;
      return `  ${flag}: ${issue.message}`;
    });
    throw new CliError(
      `${spec.command}: invalid flags\n${problems.join("\n")}\nRun \`forkloop ${spec.command} --help\` for the accepted values.`,
    );
  }
  return result.data;
}

function describeParseError(spec: CommandSpec<z.ZodType>, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: string }).code;
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown) {
    const flag = unknown[1] ?? "";
    const suggestion = closestName(flag.replace(/^-+/, ""), Object.keys(spec.options));
    return `${spec.command}: unknown flag ${flag}.${
      suggestion ? ` Did you mean --${suggestion}?` : ""
    } Run \`forkloop ${spec.command} --help\` for the list.`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return `${spec.command}: ${message.replace(/^Option /, "flag ")}. Give the flag a value, e.g. --flag=value.`;
  }
  return `${spec.command}: ${message}`;
}

/** The known flag nearest to a mistyped one (edit distance ≤ 3), to suggest the fix. */
export { closestName as closestFlag } from "@forkloop/loop-core";
