import type { ShellWord } from "./shell-word.js";

/**
 * What an option takes: nothing, a value, a path the command reads, or an optional value that
 * must be attached (`--color=auto`, `-uno`) and is never the next word.
 */
export type FlagArgument = "none" | "value" | "path" | "optional";

export interface FlagSpec {
  readonly short: ReadonlyMap<string, FlagArgument>;
  readonly long: ReadonlyMap<string, FlagArgument>;
  /** `head -5`, `nice -10`: a dash and digits is an option. */
  readonly numeric: boolean;
}

/**
 * A flag list as a reviewer reads it: `"-n:value -q --lines:value -f:path --quiet"`, and `-N`
 * for numeric options. Options not listed are not accepted: the tables are allowlists (R-S2).
 */
export function flags(spec: string): FlagSpec {
  const short = new Map<string, FlagArgument>();
  const long = new Map<string, FlagArgument>();
  let numeric = false;
  for (const entry of spec.split(/\s+/).filter((item) => item.length > 0)) {
    if (entry === "-N") {
      numeric = true;
      continue;
    }
    const [name = "", argument = "none"] = entry.split(":");
    if (argument !== "none" && argument !== "value" && argument !== "path" && argument !== "optional")
      throw new Error(`bad flag spec ${entry}`);
    if (name.startsWith("--")) long.set(name.slice(2), argument);
    else if (/^-.$/.test(name)) short.set(name.slice(1), argument);
    else throw new Error(`bad flag spec ${entry}`);
  }
  return { short, long, numeric };
}

export interface ParsedFlag {
  /** As written without dashes: `o`, `output`. */
  readonly name: string;
  readonly value?: ShellWord;
  readonly argument: FlagArgument;
}

export type ParsedArguments =
  | { readonly ok: true; readonly flags: readonly ParsedFlag[]; readonly operands: readonly ShellWord[] }
  | { readonly ok: false; readonly reason: string };

export interface ParseOptions {
  /** Wrappers (`nice -n 5 cmd -x`): options end at the first operand (the rest are operands), as POSIX getopt does. */
  readonly stopAtOperand?: boolean;
}

/**
 * Splits arguments into options and operands as GNU getopt does (clusters `-uo F`, `-oF`,
 * `--output=F`, `--output F`, `--` ends options; options may follow operands). An option that
 * is not in the spec, or a word whose value is only known at run time where an option could
 * be, is a failure naming it: `$X` may expand to `-o file`.
 */
export function parseArguments(
  words: readonly ShellWord[],
  spec: FlagSpec,
  options: ParseOptions = {},
): ParsedArguments {
  const parsed: ParsedFlag[] = [];
  const operands: ShellWord[] = [];
  let index = 0;
  const valueAt = (position: number): ShellWord | undefined => words[position];
  while (index < words.length) {
    const word = words[index] as ShellWord;
    index++;
    if (word.kind !== "literal") {
      if (word.text.startsWith("-"))
        return { ok: false, reason: `the option ${word.text} is only known at run time` };
      if (options.stopAtOperand === true)
        return { ok: true, flags: parsed, operands: [word, ...words.slice(index)] };
      operands.push(word);
      continue;
    }
    const text = word.value;
    if (text === "--") {
      operands.push(...words.slice(index));
      return { ok: true, flags: parsed, operands };
    }
    if (!text.startsWith("-") || text === "-") {
      if (options.stopAtOperand === true)
        return { ok: true, flags: parsed, operands: [word, ...words.slice(index)] };
      operands.push(word);
      continue;
    }
    if (text.startsWith("--")) {
      const equals = text.indexOf("=");
      const name = equals === -1 ? text.slice(2) : text.slice(2, equals);
      const argument = spec.long.get(name);
      if (argument === undefined) return { ok: false, reason: `the option --${name}` };
      if (argument === "none" || (argument === "optional" && equals === -1)) {
        if (equals !== -1) return { ok: false, reason: `the option --${name} with a value` };
        parsed.push({ name, argument });
        continue;
      }
      if (equals !== -1) {
        parsed.push({ name, argument, value: { kind: "literal", text, value: text.slice(equals + 1) } });
        continue;
      }
      const value = valueAt(index);
      if (value === undefined) return { ok: false, reason: `the option --${name} without its value` };
      index++;
      parsed.push({ name, argument, value });
      continue;
    }
    if (spec.numeric && /^-\d+$/.test(text)) {
      parsed.push({ name: text.slice(1), argument: "none" });
      continue;
    }
    for (let letter = 1; letter < text.length; letter++) {
      const name = text[letter] as string;
      const argument = spec.short.get(name);
      if (argument === undefined) return { ok: false, reason: `the option -${name}` };
      if (argument === "none") {
        parsed.push({ name, argument });
        continue;
      }
      const rest = text.slice(letter + 1);
      if (argument === "optional" && rest.length === 0) {
        parsed.push({ name, argument });
      } else if (rest.length > 0) {
        parsed.push({ name, argument, value: { kind: "literal", text: rest, value: rest } });
      } else {
        const value = valueAt(index);
        if (value === undefined) return { ok: false, reason: `the option -${name} without its value` };
        index++;
        parsed.push({ name, argument, value });
      }
      break;
    }
  }
  return { ok: true, flags: parsed, operands };
}

/** Whether one of these options was given. */
export function hasFlag(parsed: readonly ParsedFlag[], ...names: readonly string[]): boolean {
  return parsed.some((flag) => names.includes(flag.name));
}
