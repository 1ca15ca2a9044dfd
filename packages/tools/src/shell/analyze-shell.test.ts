// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell commands.
import { describe, expect, it } from "vitest";
import { analyzeShell } from "./analyze-shell.js";
import { denyName } from "./program-name.js";
import { isReadOnlyShellCommand } from "./read-only-shell.js";

/** The programs bash would run, in order (wrappers included). */
function programs(command: string): (string | undefined)[] {
  return analyzeShell(command)
    .commands.filter((part) => part.words.length > 0)
    .map((part) => denyName(part.words[0]));
}

describe("R-S1: the command walk finds every simple command", () => {
  it.each([
    ["a && b || c; d | e & f", ["a", "b", "c", "d", "e", "f"]],
    // Expansions run before the command that uses them.
    ["echo $(rm x) `id` <(cat y) >(tee z)", ["rm", "id", "cat", "tee", "echo"]],
    ["(a; { b; }) | c |& d", ["a", "b", "c", "d"]],
    ["if a; then b; elif c; then d; else e; fi", ["a", "b", "c", "d", "e"]],
    ["while a; do b; done; until c; do d; done", ["a", "b", "c", "d"]],
    ["for x in $(a); do b; done", ["a", "b"]],
    ["case $(a) in x) b;; esac", ["a", "b"]],
    ["f() { a; }; f", ["a", "f"]],
    ["coproc a", ["a"]],
    ["cat <<EOF\n$(a)\nEOF", ["a", "cat"]],
    ["x=$(a) b", ["a", "b"]],
    ["env X=1 nice -n 5 timeout 3 a", ["env", "nice", "timeout", "a"]],
    ["xargs -0 -n1 a", ["xargs", "a"]],
    ["find . -exec a {} \\; -execdir b {} +", ["find", "a", "b"]],
    ["bash -c 'a; sh -c \"b\"'", ["bash", "a", "sh", "b"]],
    ["eval 'a' b", ["eval", "a"]],
    ["trap 'a' EXIT", ["trap", "a"]],
    ["watch 'a | b'", ["watch", "a", "b"]],
    ["/bin/rm x; \\rm y; 'rm' z; r''m w", ["rm", "rm", "rm", "rm"]],
    ["a #'\nb\n#'", ["a", "b"]],
    ["a\\\nb", ["ab"]],
    ["command -v a; command a", ["command", "command", "a"]],
    // R-S1 audit: `--` ends eval's and trap's options; flock takes -c after the lock file.
    ["eval -- 'a'", ["eval", "a"]],
    ["trap -- 'a' EXIT", ["trap", "a"]],
    ["flock /tmp/l -c 'a'", ["flock", "a"]],
    ["bash /dev/stdin <<< 'a'", ["bash", "a"]],
  ])("R-S1: %j runs %j", (command, expected) => {
    expect(programs(command)).toEqual(expected);
  });

  it.each([
    ["$CMD x", /command name \$CMD/],
    ['eval "$x"', /eval runs/],
    ['bash -c "$x"', /bash -c runs/],
    ["env -S 'rm x'", /env with the option -S/],
    ["echo 'unterminated", /syntax error/],
    ["echo $((x + 1))", /arithmetic on x/],
    ["echo ${!ref}", /named by another variable/],
    ["echo ${x@P}", /transforms/],
    ["ls\rrm", /control character U\+000D/],
    ["a $(b $(c $(d $(e $(f $(g $(h $(i $(j $(k))))))))))", /deeper than 8/],
    // R-S1 audit: bash evaluates these as code although the text is quoted or a file.
    ["let 'a[$(rm x)]'", /let evaluates/],
    ["declare -i n='a[$(rm x)]'", /declare -i makes bash evaluate/],
    ["declare -n r=x", /declare -n makes bash evaluate/],
    ["declare 'a[$(rm x)]=1'", /evaluates an index/],
    ["printf -v 'a[$(rm x)]' 1", /printf -v .* evaluates/],
    ["read 'a[$(rm x)]' <<< 1", /read .* may evaluate/],
    ["test -v 'a[$(rm x)]'", /test -v .* evaluates/],
    ["[[ -v 'a[$(rm x)]' ]]", /\[\[ -v .* evaluates/],
    ["a=(['$(rm x)']=1)", /array index/],
    ["alias ls=rm", /alias defines/],
    [". ./env.sh", /\. runs a file/],
    ["BASH_ENV=./x bash -c :", /BASH_ENV names a file/],
    ["export ENV=./x", /ENV names a file/],
    ["env BASH_ENV=./x bash -c :", /BASH_ENV names a file/],
    ["bash --rcfile ./x -i", /--rcfile runs a startup file/],
    ["sh <(echo rm x)", /sh runs the script <\(echo rm x\)/],
    ["bash /dev/fd/3 3<<<'rm x'", /bash runs the script \/dev\/fd\/3/],
    ["printf 'rm x' | xargs -0 sh -c", /sh -c runs a script read from standard input/],
    ["xargs -I{} sh -c '{}'", /sh -c runs '\{\}'/],
    ["find . -exec sh -c {} ;", /sh -c runs \{\}/],
  ])("R-S1: %j cannot be fully seen (%s)", (command, reason) => {
    expect(analyzeShell(command).opaque.join("; ")).toMatch(reason);
  });

  it("R-S1: every redirection to a file is a read or a write of that path", () => {
    const [part] = analyzeShell("cmd < in > out 2>&1 >> log &> all 2>/dev/null <> both").commands;
    expect(part?.redirects.map((redirect) => `${redirect.access}:${redirect.target.text}`)).toEqual([
      "read:in",
      "write:out",
      "write:log",
      "write:all",
      "write:/dev/null",
      "read:both",
      "write:both",
    ]);
    expect(analyzeShell("{ a; } > out").commands.at(-1)?.redirects[0]?.target.text).toBe("out");
  });
});

describe("R-S2: the Bash tool's own read-only predicate (parallel execution)", () => {
  it.each(["ls -la", "git log --oneline -5", "grep -rn 'foo$' src; wc -l src/*.ts", "cat a 2>/dev/null"])(
    "R-S2: read-only: %s",
    (command) => expect(isReadOnlyShellCommand(command)).toBe(true),
  );
  it.each(["echo hi > file", "sort -o out in", "FOO=1 ls", "env", "ls $(rm x)", "npm test", "$X"])(
    "R-S2: not read-only: %s",
    (command) => expect(isReadOnlyShellCommand(command)).toBe(false),
  );
});
