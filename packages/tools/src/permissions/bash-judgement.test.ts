// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are shell commands.
import { linkSync, mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { PermissionMode } from "@forkloop/loop-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBuiltinTools } from "../builtin-tools.js";
import { createTempWorkspace, type TempWorkspace } from "../testing/index.js";
import { createPermissionChecker, type PermissionRules } from "./permission-checker.js";

const tools = createBuiltinTools();
let ws: TempWorkspace;
let outside: TempWorkspace;

beforeAll(() => {
  ws = createTempWorkspace("forkloop-bash-judge-");
  outside = createTempWorkspace("forkloop-bash-outside-");
  writeFileSync(join(ws.root, "README.md"), "# readme\n");
  writeFileSync(join(ws.root, ".env"), "KEY=secret\n");
  mkdirSync(join(ws.root, "src"));
  writeFileSync(join(ws.root, "src/a.ts"), "export {}\n");
  writeFileSync(join(outside.root, "secret.txt"), "outside\n");
  linkSync(join(outside.root, "secret.txt"), join(ws.root, "linked.txt"));
  symlinkSync(outside.root, join(ws.root, "out"));
  // Below directories: a hard link to the outside file, a symlink to it, and a tree without either.
  mkdirSync(join(ws.root, "hl/deep"), { recursive: true });
  writeFileSync(join(outside.root, "linked-below.txt"), "outside\n");
  linkSync(join(outside.root, "linked-below.txt"), join(ws.root, "hl/deep/inner.txt"));
  mkdirSync(join(ws.root, "sl"));
  symlinkSync(join(outside.root, "secret.txt"), join(ws.root, "sl/l"));
  mkdirSync(join(ws.root, "plain"));
  writeFileSync(join(ws.root, "plain/l"), "plain\n");
  mkdirSync(join(ws.root, "evil/.git/objects"), { recursive: true });
  mkdirSync(join(ws.root, "evil/.git/refs"), { recursive: true });
  writeFileSync(join(ws.root, "evil/.git/HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(ws.root, "evil/.git/config"), "[core]\n\tbare = false\n\tfsmonitor = touch pwned\n");
});
afterAll(() => {
  ws.cleanup();
  outside.cleanup();
});

async function decide(mode: PermissionMode, command: string, rules: Partial<PermissionRules> = {}) {
  const checker = createPermissionChecker({
    mode,
    rules: { allow: [], ask: [], deny: [], ...rules },
    tools,
    cwd: ws.root,
    home: outside.root,
  });
  // What decided the call (R-K2) is the provenance test's subject, not these.
  const { decidedBy: _, ...decision } = await checker(
    "Bash",
    { command },
    { signal: new AbortController().signal, toolUseId: "t", agentId: "main" },
  );
  return decision;
}

const SAFE_READS = [
  "ls -la",
  "ls",
  "cat README.md",
  "cat README.md | head -20",
  "head -n 5 src/a.ts",
  "wc -l src/*.ts",
  "git status",
  "git log --oneline -5",
  "git diff HEAD~1 && git status --short",
  "grep -rn 'foo$' src",
  "find . -name '*.ts' -type f",
  "pwd",
  "echo hello; echo $HOME",
  "sleep 1; echo hello",
  "sleep 0.5 && ls",
  "sort -u README.md",
  "uniq README.md",
  "xxd README.md",
  "date +%Y",
  "uname -a",
  "cd src && cat a.ts",
  "ls 2>&1 >/dev/null",
  "git branch -a",
  "git remote -v",
  "rg foo src",
  "jq . package.json",
  "# just a comment",
];

describe("R-S2: safe commands stay allowed (the table of what must not regress)", () => {
  it.each(SAFE_READS)("R-S2: auto-approved in default, dontAsk and plan: %s", async (command) => {
    for (const mode of ["default", "dontAsk", "plan"] as const) {
      expect(await decide(mode, command), `${mode}: ${command}`).toEqual({ behavior: "allow" });
    }
  });

  it.each([
    ["npm test", "Bash(npm test:*)"],
    ["npm test -- --watch", "Bash(npm test:*)"],
    ["CI=1 npm test", "Bash(npm test:*)"],
    ["npm test && npm test -- a", "Bash(npm test:*)"],
    ["cd src && npm test", "Bash(npm test:*)"],
    ["npm run lint", "Bash(npm run *)"],
    // $'\n' is a quoted argument, not a command separator.
    ["npm test $'\\n' touch", "Bash(npm test:*)"],
    ["git commit -m 'x y'", "Bash(git commit:*)"],
    ["/usr/bin/git push", "Bash(git push:*)"],
  ])("R-S1: %j is allowed by %s in dontAsk", async (command, rule) => {
    expect(await decide("dontAsk", command, { allow: [rule] })).toEqual({ behavior: "allow" });
  });
});

describe("R-S2: read-only misuse is not read-only", () => {
  it.each([
    "env sh -c 'touch x'",
    "env",
    "printenv",
    "printenv ANTHROPIC_API_KEY",
    "sort --output=F README.md",
    "sort -uo F README.md",
    "sort -o F README.md",
    "sort README.md -o F",
    "uniq README.md OUT",
    "xxd -r README.md",
    "xxd README.md out.bin",
    "git grep -O'sh -c id' x",
    "git grep --open-files-in-pager=x y",
    "git branch NAME",
    "git branch -D main",
    "git remote add x y",
    "git remote remove origin",
    "git tag v1",
    "git log --output=x",
    "git diff --ext-diff",
    "git -c core.pager=x log",
    "git -C .. status",
    "date -s 2020-01-01",
    "date 010100002020",
    "hostname evil",
    "find . -delete",
    "find . -exec rm {} ;",
    "find . -fprint x",
    "awk '{print}' README.md",
    "sed -n p README.md",
    "xargs cat",
    "python3 -c 'print(1)'",
    "node -e 1",
    "tree -o out.txt",
    "sort --compress-program=sh README.md",
    "rg --pre sh foo",
    "printf -v PATH x",
    "PATH=. ls",
    "IFS=x; ls",
    "LD_PRELOAD=x cat README.md",
    "cat /etc/passwd",
    "cat ~/secret.txt",
    "cat out/secret.txt",
    "cat linked.txt",
    "head ../x",
    "cat $FILE",
    "cd .. && cat x",
    "cd $X && ls",
    "ls > listing.txt",
    "echo hi >> README.md",
    "cat < /etc/passwd",
    "echo $((x))",
    "echo ${!x}",
    "echo ${x@P}",
    "[[ $x -eq 1 ]]",
    "cd evil && git status",
    "npm test",
    "unknown-command",
    "./ls",
    "ls\rrm x",
    "echo 'unterminated",
  ])("R-S2: not auto-approved in default, dontAsk or plan: %j", async (command) => {
    for (const mode of ["default", "dontAsk", "plan"] as const) {
      expect((await decide(mode, command)).behavior, `${mode}: ${command}`).toBe("deny");
    }
  });
});

describe("R-S1: the splitter agrees with bash (allow rules)", () => {
  it.each([
    `npm test "'" $(touch x) "'"`,
    `npm test \\' $(touch x) \\'`,
    "npm test #'\ntouch x\n#'",
    "npm test $'\\'' ; touch x ; echo $'\\''",
    "npm test > /tmp/any",
    "npm test > out.txt",
    "npm test `touch x`",
    "npm test <(touch x)",
    "npm test; (touch x)",
    "npm test && { touch x; }",
    "npm test |& touch x",
    "npm test & touch x",
    "coproc touch x",
    "npm test\\\n; touch x",
    "npm test $(echo; touch x)",
    "bash -c 'npm test; touch x'",
    'sh -c "touch x"',
    "eval 'touch x'",
    'eval "$CMD"',
    "$CMD",
    "npm${IFS}test; touch x",
    "x=$(touch x) npm test",
    "cat <<EOF | sh\ntouch x\nEOF",
    "if true; then touch x; fi",
    "f() { touch x; }; f",
    "LD_PRELOAD=/tmp/x.so npm test",
    "./npm test",
    "npm test; npm install evil",
  ])("R-S1: Bash(npm test:*) does not allow %j", async (command) => {
    const decision = await decide("dontAsk", command, { allow: ["Bash(npm test:*)"] });
    expect(decision.behavior, command).toBe("deny");
  });
});

describe("R-S3: deny rules hold after normalisation, in every mode", () => {
  it.each([
    "rm x",
    "/bin/rm x",
    "\\rm x",
    "'rm' x",
    "r''m x",
    "env rm x",
    "env FOO=1 rm x",
    "command rm x",
    "exec rm x",
    "nice -n 5 rm x",
    "nohup rm x",
    "timeout 5 rm x",
    "time rm x",
    "builtin rm x",
    "sudo rm x",
    "xargs rm",
    "xargs -0 -n1 rm",
    "find . -exec rm {} ;",
    "echo $(rm x)",
    "echo `rm x`",
    "ls #'\nrm x\n#'",
    "bash -c 'rm x'",
    "bash -lc 'bash -c \"rm x\"'",
    "eval 'rm x'",
    "true && rm x",
    "(rm x)",
    "cat <(rm x)",
    "watch 'rm x'",
    "$X x",
    'eval "$X"',
    "rm${IFS}x",
    "busybox rm x",
    "trap 'rm x' EXIT",
  ])("R-S3: Bash(rm:*) denies %j in bypassPermissions", async (command) => {
    const decision = await decide("bypassPermissions", command, { deny: ["Bash(rm:*)"] });
    expect(decision.behavior, command).toBe("deny");
  });

  it.each([
    ["cat .env", "Read(./.env)"],
    ["grep KEY .env", "Read(./.env)"],
    ["head .e*", "Read(./.env)"],
    ["cat *", "Read(./.env)"],
    ["grep -r KEY .", "Read(./.env)"],
    ["rg KEY", "Read(./.env)"],
    ["cat < .env", "Read(./.env)"],
    ["cd src && cat ../.env", "Read(./.env)"],
    ["cp .env public.txt", "Read(./.env)"],
    ["git show HEAD:.env", "Read(./.env)"],
    ["echo x > README.md", "Edit(README.md)"],
    ["echo x > src/a.ts", "Edit(src/**)"],
  ])("R-S3: %j is refused under deny %s, also in bypassPermissions", async (command, rule) => {
    for (const mode of ["bypassPermissions", "default"] as const) {
      expect((await decide(mode, command, { deny: [rule] })).behavior, `${mode}: ${command}`).toBe("deny");
    }
  });

  // R-S1 audit: runners past the known wrappers, values programs run as commands, a copy of the
  // program under another name (src/permissions/hidden-commands.ts).
  it.each([
    "strace -o /dev/null rm x",
    "chroot / rm x",
    "unshare -r rm x",
    "parallel rm ::: x",
    "setpriv rm x",
    "su -c 'rm x'",
    "script -qc 'rm x' /dev/null",
    "gdb -batch -ex 'shell rm x'",
    "cp /bin/rm r; ./r x",
    "cat /bin/rm > r; chmod +x r; ./r x",
    "dd if=/bin/rm of=r",
    "hash -p /bin/rm zz; zz x",
    "git -c alias.zz='!rm x' zz",
    "GIT_EXTERNAL_DIFF='rm x; true' git diff",
    "GIT_EDITOR=rm git commit",
    "env PAGER='rm x' man ls",
    "export GIT_EXTERNAL_DIFF='rm x'; git diff",
    "GIT_CONFIG_PARAMETERS=\"'alias.zz=!rm x'\" git zz",
    "alias ls=rm",
    "man -P 'rm x' ls",
    "awk 'BEGIN { system(\"rm x\") }'",
    "perl -e 'system(\"rm x\")'",
    "python3 -c 'import os; os.system(\"rm x\")'",
    "export BASH_ENV=<(echo rm x); bash -c :",
    "bash --rcfile <(echo rm x) -i -c :",
  ])(
    "R-S3: Bash(rm:*) also holds when rm hides in arguments or values: %j in bypassPermissions",
    async (command) => {
      const decision = await decide("bypassPermissions", command, { deny: ["Bash(rm:*)"] });
      expect(decision.behavior, command).toBe("deny");
      expect(decision.behavior === "deny" && decision.message).toMatch(/Bash\(rm:\*\)/);
    },
  );

  it("R-S3: a deny rule still does not block rm as a word of a command that only reads or prints", async () => {
    for (const command of [
      "grep -rn rm src",
      "echo 'rm x'",
      "which rm",
      "git rm src/a.ts",
      "ls rm",
      "git commit -m 'drop the rm step'",
      "sed -i 's/rm -rf/echo/' src/a.ts",
      "echo 'use rm carefully' > notes.txt",
    ]) {
      expect(await decide("bypassPermissions", command, { deny: ["Bash(rm:*)"] }), command).toEqual({
        behavior: "allow",
      });
    }
  });

  it("R-S3: a deny rule does not block what it does not name", async () => {
    expect(await decide("default", "ls | grep rm", { deny: ["Bash(rm:*)"] })).toEqual({ behavior: "allow" });
    expect(await decide("default", "cat README.md", { deny: ["Read(./.env)"] })).toEqual({
      behavior: "allow",
    });
    expect(await decide("bypassPermissions", "echo rm", { deny: ["Bash(rm:*)"] })).toEqual({
      behavior: "allow",
    });
  });
});

describe("R-S1 audit: bash evaluates quoted text in these places, so they are not read-only", () => {
  it.each([
    "test -v 'a[$(touch x)]'",
    "[ -v 'a[$(touch x)]' ]",
    "[[ -v 'a[$(touch x)]' ]]",
    "v='a[$(touch x)]'; [[ -v $v ]]",
    "a=(['$(touch x)']=1)",
    "a+=([1+$(touch x)]=1)",
    "echo hi; test -v 'a[$(touch x)]'",
    "jq -n 'import \"x\" as $x; $x'",
  ])("R-S1: %j needs approval in default, dontAsk and plan", async (command) => {
    for (const mode of ["default", "dontAsk", "plan"] as const) {
      expect((await decide(mode, command, { allow: ["Bash(echo:*)"] })).behavior, `${mode}: ${command}`).toBe(
        "deny",
      );
    }
  });

  it("R-S2: plain names and integer indexes stay read-only", async () => {
    for (const command of ["test -v HOME", "[[ -v a[1] ]]", "a=([0]=x [1]=y)", "test -f README.md"]) {
      expect(await decide("default", command), command).toEqual({ behavior: "allow" });
    }
  });
});

describe("R-S1: bad input", () => {
  it("R-S1: an unparseable command is refused with the reason and the rule that would allow it", async () => {
    const decision = await decide("dontAsk", "echo 'unterminated");
    expect(decision.behavior).toBe("deny");
    expect(decision.behavior === "deny" && decision.message).toMatch(
      /syntax error: unterminated single quote/,
    );
    expect(decision.behavior === "deny" && decision.message).toContain(`"Bash(echo 'unterminated)"`);
  });

  it("R-S1: an exact allow rule runs a command the parser cannot fully see", async () => {
    expect(await decide("dontAsk", 'eval "$CMD"', { allow: ['Bash(eval "$CMD")'] })).toEqual({
      behavior: "allow",
    });
  });

  it("R-S4: a read-only command on a hard-linked file says why it needs approval", async () => {
    const decision = await decide("dontAsk", "cat linked.txt");
    expect(decision.behavior === "deny" && decision.message).toMatch(
      /2 hard links: it may be a file outside the workspace/,
    );
  });

  it("R-S4: a recursive read of contents below a hard link to an outside file needs approval; a listing does not", async () => {
    for (const command of [
      "grep -r secret hl",
      "grep -rn outside .",
      "rg outside hl",
      "grep --directories=recurse outside hl",
      "cd hl && grep -r outside",
      "diff -r hl plain",
    ]) {
      const decision = await decide("dontAsk", command);
      expect(decision.behavior, command).toBe("deny");
      expect(decision.behavior === "deny" && decision.message, command).toMatch(
        /(inner|linked)\.txt, which has 2 hard links: it may be a file outside the workspace/,
      );
    }
    for (const command of ["ls -R hl", "find hl -type f", "du -a hl", "grep -r plain plain"])
      expect(await decide("dontAsk", command), command).toEqual({ behavior: "allow" });
  });

  it("R-S4: diff -r follows symlinks below (it would print the outside file); grep -r and diff --no-dereference do not", async () => {
    const decision = await decide("dontAsk", "diff -r sl plain");
    expect(decision.behavior === "deny" && decision.message).toMatch(
      /follows the symlink .*sl\/l out of the workspace/,
    );
    for (const command of ["grep -r x sl", "diff -r --no-dereference sl plain"])
      expect(await decide("dontAsk", command), command).toEqual({ behavior: "allow" });
  });

  it("R-S2: git in a repository whose config names a program needs approval, and says which key", async () => {
    const decision = await decide("dontAsk", "cd evil && git status");
    expect(decision.behavior === "deny" && decision.message).toMatch(/core\.fsmonitor/);
  });

  it.each([
    ["cd evil && git status", "Bash(git status:*)"],
    ["cd evil && git diff", "Bash(git diff:*)"],
    ["git -C evil status", "Bash(git:*)"],
    ["cd evil; timeout 5 git commit -m x", "Bash(git commit:*)"],
    ["git --git-dir=evil/.git log", "Bash(git:*)"],
    ["cd $D && git status", "Bash(git status:*)"],
  ])(
    "R-S2: an allow rule approves git, not the hostile repository config it would run: %s",
    async (command, rule) => {
      for (const mode of ["default", "dontAsk", "acceptEdits"] as const) {
        const decision = await decide(mode, command, { allow: [rule, "Bash(cd:*)", "Bash(timeout:*)"] });
        expect(decision.behavior, `${mode}: ${command}`).toBe("deny");
        expect(decision.behavior === "deny" && decision.message).toMatch(
          /core\.fsmonitor|--git-dir|only known at run time/,
        );
      }
    },
  );

  it("R-S2: under Bash(git diff:*), --output FILE is a write, checked like > FILE", async () => {
    for (const command of ["git diff --output=out.txt", "git log --output out.txt", "git diff --output=$F"]) {
      const decision = await decide("dontAsk", command, { allow: ["Bash(git diff:*)", "Bash(git log:*)"] });
      expect(decision.behavior === "deny" && decision.message, command).toMatch(/it writes/);
    }
    expect(await decide("acceptEdits", "git diff --output=out.txt", { allow: ["Bash(git diff:*)"] })).toEqual(
      { behavior: "allow" },
    );
  });

  it("R-S1 audit: under Bash(git diff:*), git diff of files outside the workspace (a plain diff, --no-index or implied) needs approval", async () => {
    const allow = { allow: ["Bash(git diff:*)"] };
    for (const command of [
      `git diff /dev/null ${join(outside.root, "secret.txt")}`,
      `git diff --no-index -- /dev/null ${join(outside.root, "secret.txt")}`,
      "git diff --no-index /dev/null linked.txt",
      "git diff --no-index sl plain",
      "git diff -O../x",
    ]) {
      const decision = await decide("dontAsk", command, allow);
      expect(decision.behavior, command).toBe("deny");
    }
    for (const command of ["git diff HEAD~1", "git diff --stat", "git diff main..HEAD -- README.md"])
      expect(await decide("dontAsk", command, allow), command).toEqual({ behavior: "allow" });
  });

  it("R-S2: a redirect into .git/ is not an edit acceptEdits or a bare Write rule approves", async () => {
    for (const [mode, allow] of [
      ["acceptEdits", []],
      ["default", ["Write"]],
    ] as const) {
      const decision = await decide(mode, "echo '[core] fsmonitor = x' >> evil/.git/config", {
        allow: [...allow],
      });
      expect(decision.behavior === "deny" && decision.message, mode).toMatch(/only a rule naming the path/);
    }
    expect(await decide("acceptEdits", "echo x > src/out.txt")).toEqual({ behavior: "allow" });
  });

  it("R-S2: the same allow rules still approve git in a plain repository (the control)", async () => {
    const cases: [string, string][] = [
      ["git status", "Bash(git status:*)"],
      ["git -C src status", "Bash(git:*)"],
      ["git commit -m x", "Bash(git commit:*)"],
    ];
    for (const [command, rule] of cases)
      expect(await decide("dontAsk", command, { allow: [rule] }), command).toEqual({ behavior: "allow" });
  });
});
