import { createRequire } from "node:module";
import type {
  ArithmeticExpression,
  CommandNode,
  Command as CommandSyntax,
  CompoundList,
  ParsedScript,
  Redirection,
  Statement,
  TestExpression,
  Word,
  WordPart,
} from "unbash";
import { builtinEvaluation, isPlainVariableName } from "./builtin-evaluation.js";
import { unwrapCommand } from "./command-wrappers.js";
import { literalValue, type ShellWord, shellWord } from "./shell-word.js";

type Unbash = typeof import("unbash");

/**
 * R-V2: the shell parser loads when the first command is analysed, not at import. It is an ES
 * module: Node versions that can require one (20.19+, 22.12+) require it synchronously then;
 * older ones import it with this module.
 */
let unbash: Unbash | undefined = (process.features as { require_module?: boolean }).require_module
  ? undefined
  : await import("unbash");

function parse(source: string): ParsedScript {
  unbash ??= createRequire(import.meta.url)("unbash") as Unbash;
  return unbash.parse(source);
}

/** A file a redirection opens: `> f` writes it, `< f` reads it. */
export interface ShellRedirect {
  readonly access: "read" | "write";
  readonly target: ShellWord;
}

/**
 * One simple command bash would run, after unwrapping (R-S1). `nice -n 5 rm x` yields two entries:
 * `nice -n 5 rm x` with `wraps: true` (judged by what it runs) and `rm x`.
 */
export interface ShellCommand {
  /** argv as written; `words[0]` is the program (none for a bare assignment or redirection). */
  readonly words: readonly ShellWord[];
  /** Names set for this command: `FOO=1 cmd`, `env FOO=1 cmd`; for a bare `FOO=1` the variables it sets. */
  readonly assignments: readonly string[];
  readonly redirects: readonly ShellRedirect[];
  /** A wrapper (`env`, `nice`, `xargs`, `find -exec` …): allowed or denied by the command it runs. */
  readonly wraps: boolean;
  /** `xargs` appends arguments read from stdin, unknown here. */
  readonly extraArguments: boolean;
  /** The literal values assigned (`GIT_EXTERNAL_DIFF='rm x' git diff`, `export PAGER='…'`): programs may run them. */
  readonly assignedValues?: readonly string[];
}

export interface ShellAnalysis {
  /** Every simple command, in source order, including those inside `$(…)`, `<(…)`, `bash -c '…'`. */
  readonly commands: readonly ShellCommand[];
  /** Why parts of the command cannot be seen (parse error, `$CMD args`, `eval "$x"` …): such a call needs permission. */
  readonly opaque: readonly string[];
}

/** `$(…)` in `$(…)`, literal `bash -c '…'` in `bash -c '…'` …: deeper than this is not followed. */
const MAX_NESTED_SCRIPTS = 8;
/** Bash and a JavaScript parser may disagree about control characters; such a command is not judged. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b-\u001f\u007f]/;

/**
 * Parses a Bash command with unbash (a Bash 5.3 parser) and lists every simple command it would
 * run and every file it would redirect to, so that permission rules judge what bash actually runs
 * rather than how the text looks (R-S1). Pure: no file system access.
 */
export function analyzeShell(command: string): ShellAnalysis {
  const walker = new ShellWalker();
  walker.script(command, 0);
  return { commands: walker.commands, opaque: walker.opaque };
}

class ShellWalker {
  readonly commands: ShellCommand[] = [];
  readonly opaque: string[] = [];

  script(source: string, depth: number): void {
    const control = CONTROL_CHARACTER.exec(source);
    if (control !== null) {
      const code = (control[0].codePointAt(0) ?? 0).toString(16).padStart(4, "0").toUpperCase();
      this.opaque.push(`the command contains the control character U+${code}`);
      return;
    }
    this.parsed(parse(source), depth);
  }

  private parsed(script: ParsedScript | undefined, depth: number): void {
    if (depth > MAX_NESTED_SCRIPTS) {
      this.opaque.push(`nested shell scripts deeper than ${MAX_NESTED_SCRIPTS} levels`);
      return;
    }
    if (script === undefined) {
      this.opaque.push("a substitution the parser could not read");
      return;
    }
    for (const error of script.errors ?? []) this.opaque.push(`bash syntax error: ${error.message}`);
    for (const statement of script.commands) this.statement(statement, depth);
  }

  private list(list: CompoundList, depth: number): void {
    for (const statement of list.commands) this.statement(statement, depth);
  }

  private statement(statement: Statement, depth: number): void {
    const node = statement.command;
    if (node.type === "AndOr") for (const part of node.commands) this.pipelineNode(part, depth);
    else this.pipelineNode(node, depth);
  }

  private pipelineNode(node: CommandNode | import("unbash").Pipeline, depth: number): void {
    if (node.type === "Pipeline") for (const part of node.commands) this.commandNode(part, depth);
    else this.commandNode(node, depth);
  }

  private commandNode(node: CommandNode, depth: number): void {
    switch (node.type) {
      case "Command":
        this.simpleCommand(node, depth);
        return;
      case "Redirected":
        this.commandNode(node.command, depth);
        this.redirectOnly(node.redirects, depth);
        return;
      case "Subshell":
      case "BraceGroup":
        this.list(node.body, depth);
        return;
      case "If":
        this.list(node.clause, depth);
        this.list(node.then, depth);
        for (const elif of node.elif) {
          this.list(elif.clause, depth);
          this.list(elif.then, depth);
        }
        if (node.else !== undefined) this.list(node.else, depth);
        return;
      case "While":
        this.list(node.clause, depth);
        this.list(node.body, depth);
        return;
      case "For":
      case "Select":
        for (const word of node.wordlist ?? []) this.word(word, depth);
        // `for x in 'a[$(cmd)]'` then `$((x))`: the loop variable may hold code for arithmetic.
        this.commands.push(bareAssignment([literalValue(shellWord(node.name)) ?? node.name.text]));
        this.list(node.body, depth);
        return;
      case "ArithmeticFor":
        for (const expression of [node.initialize, node.test, node.update])
          this.arithmetic(expression, depth);
        this.list(node.body, depth);
        return;
      case "Case":
        this.word(node.word, depth);
        for (const item of node.items) {
          for (const pattern of item.pattern) this.word(pattern, depth);
          this.list(item.body, depth);
        }
        return;
      case "TestCommand":
        this.test(node.expression, depth);
        return;
      case "ArithmeticCommand":
        this.arithmetic(node.expression, depth);
        return;
      case "Function":
        // The body is judged where it is defined: whatever it would run needs permission now.
        if (node.body.type === "CompoundList") this.list(node.body, depth);
        else this.commandNode(node.body, depth);
        return;
      case "Coproc":
        if (node.body.type === "CompoundList") this.list(node.body, depth);
        else this.commandNode(node.body, depth);
        return;
      default: {
        const unknown: { type: string } = node;
        this.opaque.push(`unsupported shell syntax ${unknown.type}`);
      }
    }
  }

  private simpleCommand(node: CommandSyntax, depth: number): void {
    const assignments: string[] = [];
    const assignedValues: string[] = [];
    const noteValue = (item: import("unbash").Assignment): void => {
      this.startupFile(item.name);
      const value = item.value.type === "ArrayValue" ? undefined : literalValue(shellWord(item.value));
      if (value !== undefined && value !== "") assignedValues.push(value);
    };
    for (const item of node.prefix) {
      if (item.type === "Assignment") {
        assignments.push(item.name);
        noteValue(item);
        this.assignmentValue(item, depth);
      }
    }
    const words: ShellWord[] = [];
    if (node.name !== undefined) {
      this.word(node.name, depth);
      words.push(shellWord(node.name));
    }
    for (const item of node.suffix) {
      if (item.type === "Word") {
        this.word(item, depth);
        words.push(shellWord(item));
      } else if (item.type === "Assignment") {
        // `declare x=$(…)`, `export A=1`: an argument to the builtin.
        noteValue(item);
        this.assignmentValue(item, depth);
        words.push({ kind: "dynamic", text: item.text });
      }
    }
    const redirects = this.redirections(node.redirects, depth);
    const stdinScript = literalStdin(node.redirects);
    const values = assignedValues.length === 0 ? {} : { assignedValues };
    if (words.length === 0) {
      this.commands.push({ words, assignments, redirects, wraps: false, extraArguments: false, ...values });
      return;
    }
    const name = words[0] as ShellWord;
    if (name.kind !== "literal") {
      this.opaque.push(`the command name ${name.text} is only known when bash runs it`);
      return;
    }
    this.expandCommand(
      { words, assignments, redirects, wraps: false, extraArguments: false, ...values },
      depth,
      stdinScript,
    );
  }

  /** `BASH_ENV=f bash -c …`, `export ENV=f`: every later shell first runs the file f names. */
  private startupFile(name: string): void {
    if (name === "BASH_ENV" || name === "ENV")
      this.opaque.push(`${name} names a file every shell started later runs first`);
  }

  /** Records a command and what it runs: wrappers are unwrapped, literal scripts parsed. */
  private expandCommand(command: ShellCommand, depth: number, stdinScript?: string): void {
    const name = literalValue(command.words[0]);
    const evaluation = name === undefined ? undefined : builtinEvaluation(name, command.words.slice(1));
    if (evaluation !== undefined) this.opaque.push(evaluation);
    const unwrapped = unwrapCommand(command.words, { stdinScript, extraArguments: command.extraArguments });
    switch (unwrapped.type) {
      case "plain":
        this.commands.push(command);
        return;
      case "wrapper": {
        // `env` or `nice` alone runs nothing else: it is judged as itself.
        if (unwrapped.command.length === 0) {
          this.commands.push(command);
          return;
        }
        this.commands.push({ ...command, wraps: true });
        for (const name of unwrapped.assignments) this.startupFile(name);
        this.innerCommand(command, unwrapped.command, depth, {
          assignments: [...command.assignments, ...unwrapped.assignments],
          extraArguments: command.extraArguments || unwrapped.extraArguments,
        });
        return;
      }
      case "also":
        this.commands.push(command);
        for (const inner of unwrapped.commands) {
          this.innerCommand(command, inner, depth, { assignments: [], extraArguments: true });
        }
        return;
      case "script":
        this.commands.push({ ...command, wraps: true });
        for (const script of unwrapped.scripts) this.script(script, depth + 1);
        return;
      case "opaque":
        this.commands.push(command);
        this.opaque.push(unwrapped.reason);
        return;
      default: {
        const unreachable: never = unwrapped;
        throw new Error(`unknown unwrap result ${JSON.stringify(unreachable)}`);
      }
    }
  }

  private innerCommand(
    outer: ShellCommand,
    words: readonly ShellWord[],
    depth: number,
    extra: { assignments: readonly string[]; extraArguments: boolean },
  ): void {
    const name = words[0] as ShellWord;
    if (name.kind !== "literal") {
      this.opaque.push(`${literalValue(outer.words[0])} runs ${name.text}, only known when bash runs it`);
      return;
    }
    this.expandCommand({ words, redirects: [], wraps: false, ...extra }, depth);
  }

  private redirectOnly(redirects: readonly Redirection[], depth: number): void {
    const seen = this.redirections(redirects, depth);
    if (seen.length > 0) {
      this.commands.push({
        words: [],
        assignments: [],
        redirects: seen,
        wraps: false,
        extraArguments: false,
      });
    }
  }

  private redirections(redirects: readonly Redirection[], depth: number): ShellRedirect[] {
    const files: ShellRedirect[] = [];
    for (const redirect of redirects) {
      if (redirect.type === "HereDoc") {
        for (const part of redirect.body.parts ?? []) this.part(part, depth);
        continue;
      }
      if (redirect.target === undefined) continue;
      this.word(redirect.target, depth);
      if (redirect.type === "HereString") continue;
      const target = shellWord(redirect.target);
      const operator = redirect.operator;
      // `2>&1`, `<&0`, `>&-`: a descriptor, not a file.
      if ((operator === ">&" || operator === "<&") && /^(\d+-?|-)$/.test(literalValue(target) ?? ""))
        continue;
      if (operator === "<" || operator === "<&") files.push({ access: "read", target });
      else if (operator === "<>") files.push({ access: "read", target }, { access: "write", target });
      else files.push({ access: "write", target });
    }
    return files;
  }

  private assignmentValue(assignment: import("unbash").Assignment, depth: number): void {
    if (assignment.index !== undefined) this.arithmeticIndex(assignment.index, depth);
    const value = assignment.value;
    if (value.type !== "ArrayValue") {
      this.word(value, depth);
      return;
    }
    for (const element of value.elements) {
      this.word(element, depth);
      // `a=(['$(cmd)']=1)`: bash evaluates an element's index as arithmetic, quoted or not.
      if (element.text.startsWith("[") && !/^\[\d+\]\+?=/.test(element.text))
        this.opaque.push(`the array index in ${element.text} is evaluated as arithmetic`);
    }
  }

  private word(word: Word, depth: number): void {
    for (const part of word.parts ?? []) this.part(part, depth);
  }

  private part(part: WordPart, depth: number): void {
    switch (part.type) {
      case "CommandExpansion":
      case "ProcessSubstitution":
        this.parsed(part.script, depth + 1);
        return;
      case "DoubleQuoted":
      case "LocaleString":
        for (const child of part.parts) this.part(child, depth);
        return;
      case "Glob":
      case "BraceExpansion":
      case "ExtendedGlob":
        for (const child of part.parts ?? []) this.part(child, depth);
        return;
      case "ArithmeticExpansion":
        this.arithmetic(part.expression, depth);
        return;
      case "ParameterExpansion":
        this.parameter(part, depth);
        return;
      case "Literal":
      case "SingleQuoted":
      case "AnsiCQuoted":
      case "SimpleExpansion":
        return;
      default: {
        const unknown: { type: string } = part;
        this.opaque.push(`unsupported word part ${unknown.type}`);
      }
    }
  }

  private parameter(part: import("unbash").ParameterExpansionPart, depth: number): void {
    // `${!ref}` and `${x@P}` evaluate a variable's content as an array index or a prompt,
    // which can run `$(…)` hidden in that content.
    if (part.prefix === "!") this.opaque.push(`${part.text} expands a variable named by another variable`);
    if (part.index !== undefined) this.arithmeticIndex(part.index, depth);
    const operation = part.operation;
    if (operation === undefined) return;
    switch (operation.type) {
      case "Default":
      case "Remove":
      case "CaseModification":
        if (operation.operand !== undefined) this.word(operation.operand, depth);
        return;
      case "Replace":
        this.word(operation.pattern, depth);
        this.word(operation.replacement, depth);
        return;
      case "Slice":
        this.arithmeticIndex(operation.offset, depth);
        if (operation.length !== undefined) this.arithmeticIndex(operation.length, depth);
        return;
      case "Transform":
        this.opaque.push(`${part.text} transforms a value in ways that can run commands`);
        return;
      case "Names":
        return;
      default:
        this.opaque.push(`unsupported parameter expansion ${part.text}`);
    }
  }

  /** An array index or slice is arithmetic: only integer literals are safe to evaluate. */
  private arithmeticIndex(word: Word, depth: number): void {
    this.word(word, depth);
    const value = literalValue(shellWord(word));
    const safe = value !== undefined && (/^\s*-?\d+\s*$/.test(value) || value === "@" || value === "*");
    if (!safe) this.opaque.push(`the index or offset ${word.text} is evaluated as arithmetic`);
  }

  /**
   * Bash evaluates a variable's content inside arithmetic as another expression, and
   * `a[$(cmd)]` in that content runs cmd: arithmetic is judged only when it uses numbers alone.
   */
  private arithmetic(expression: ArithmeticExpression | undefined, depth: number): void {
    if (expression === undefined) return;
    switch (expression.type) {
      case "ArithmeticBinary":
        this.arithmetic(expression.left, depth);
        this.arithmetic(expression.right, depth);
        return;
      case "ArithmeticUnary":
        this.arithmetic(expression.operand, depth);
        return;
      case "ArithmeticTernary":
        this.arithmetic(expression.test, depth);
        this.arithmetic(expression.consequent, depth);
        this.arithmetic(expression.alternate, depth);
        return;
      case "ArithmeticGroup":
        this.arithmetic(expression.expression, depth);
        return;
      case "ArithmeticCommandExpansion":
        this.parsed(expression.script, depth + 1);
        return;
      case "ArithmeticWord":
        for (const part of expression.parts ?? []) this.part(part, depth);
        if (!/^(0[xX][0-9a-fA-F]+|\d+(#[0-9a-zA-Z@_]+)?)$/.test(expression.value)) {
          this.opaque.push(`arithmetic on ${expression.value} evaluates the variable's content as code`);
        }
        return;
      default: {
        const unknown: { type: string } = expression;
        this.opaque.push(`unsupported arithmetic ${unknown.type}`);
      }
    }
  }

  private test(expression: TestExpression, depth: number): void {
    switch (expression.type) {
      case "TestUnary": {
        this.word(expression.operand, depth);
        // `[[ -v 'a[$(cmd)]' ]]` evaluates the index of the name it tests, quoted or not.
        // (`[[ ]]` does not expand globs: `a[1]` is the name itself.)
        const name = expression.operand.value ?? expression.operand.text;
        if ((expression.operator === "-v" || expression.operator === "-R") && !isPlainVariableName(name))
          this.opaque.push(
            `[[ ${expression.operator} ${expression.operand.text} ]] evaluates the name's index as arithmetic`,
          );
        return;
      }
      case "TestBinary": {
        this.word(expression.left, depth);
        this.word(expression.right, depth);
        // `[[ $x -eq 1 ]]` evaluates both sides as arithmetic.
        if (/^-(eq|ne|lt|le|gt|ge)$/.test(expression.operator)) {
          for (const side of [expression.left, expression.right]) {
            const value = literalValue(shellWord(side));
            if (value === undefined || !/^-?\d+$/.test(value)) {
              this.opaque.push(`[[ … ${expression.operator} … ]] evaluates ${side.text} as arithmetic`);
            }
          }
        }
        return;
      }
      case "TestLogical":
        for (const operand of expression.operands) this.test(operand, depth);
        return;
      case "TestNot":
        this.test(expression.operand, depth);
        return;
      case "TestGroup":
        this.test(expression.expression, depth);
        return;
      default: {
        const unknown: { type: string } = expression;
        this.opaque.push(`unsupported test expression ${unknown.type}`);
      }
    }
  }
}

/** The literal text a heredoc or here-string feeds a command (`<<'EOF'`, or no expansions in the body). */
function literalStdin(redirects: readonly Redirection[]): string | undefined {
  let script: string | undefined;
  for (const redirect of redirects) {
    if (redirect.type === "HereDoc") {
      const literal =
        redirect.delimiter?.quoted === true ||
        (redirect.body.parts ?? []).every((part) => part.type === "Literal");
      script = literal ? redirect.body.text : undefined;
    } else if (redirect.type === "HereString") {
      script = redirect.target === undefined ? undefined : literalValue(shellWord(redirect.target));
    } else if (redirect.operator === "<" || redirect.operator === "<&" || redirect.operator === "<>") {
      script = undefined;
    }
  }
  return script;
}

function bareAssignment(names: readonly string[]): ShellCommand {
  return { words: [], assignments: names, redirects: [], wraps: false, extraArguments: false };
}
