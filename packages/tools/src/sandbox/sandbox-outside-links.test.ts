import { execFileSync } from "node:child_process";
import { linkSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  callTool,
  createOutsideDir,
  createToolTestContext,
  resultText,
  type TempWorkspace,
  weakenedSandbox,
} from "../testing/index.js";
import { createBashTool } from "../tools/bash.js";
import { MOUNT_BUDGET } from "./outside-links.js";

/**
 * R-S9: a file in the workspace that is a hard link to a file outside it — made outside the
 * sandbox, as pnpm links node_modules into its store — is read-only inside, so no write reaches
 * the file outside; links within the workspace stay writable, a package store's tree costs one
 * bind, a local clone's shared packs leave `git commit` working, and what cannot be held in a
 * bounded number of binds is refused. Workspace and "outside" both under /var/tmp (one file
 * system, and not hidden by the sandbox's fresh /tmp). Each case has a control: the read-only
 * binds removed, the write goes through.
 */
let ws: TempWorkspace;
let outside: TempWorkspace;
beforeEach(() => {
  ws = createOutsideDir("forkloop-links-ws-");
  outside = createOutsideDir("forkloop-links-outside-");
});
afterEach(() => {
  ws.cleanup();
  outside.cleanup();
});

const sandboxed = createBashTool({ sandbox: { enabled: true } });
const unguarded = createBashTool({
  sandbox: { enabled: true },
  sandboxArgs: weakenedSandbox.noExecutionPoints,
});
const run = async (tool: ReturnType<typeof createBashTool>, command: string) =>
  resultText(await callTool(tool, { command }, createToolTestContext({ cwd: ws.root })));

function put(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

/** `name` in the workspace, a hard link to a new file `outside/name`. */
function linkedOut(name: string, text = "store\n"): string {
  put(join(outside.root, name), text);
  mkdirSync(join(ws.root, name, ".."), { recursive: true });
  linkSync(join(outside.root, name), join(ws.root, name));
  return join(outside.root, name);
}

/** Appends by a program (no shell redirection the permission check could read). */
const append = (path: string) =>
  `'${process.execPath}' -e 'try{require("fs").appendFileSync(process.argv[1],"ATK\\n");console.log("wrote")}catch(e){console.log(e.code)}' '${path}'`;

describe("R-S9: hard links to files outside the workspace are read-only in the sandbox (real bwrap)", () => {
  it("R-S9: a hard link to a file outside cannot be written, chmodded or truncated through; a link within the workspace and other files can; without the binds the outside file changes (control)", async () => {
    const victim = linkedOut("hl.txt");
    put(join(ws.root, "a.txt"), "a\n");
    linkSync(join(ws.root, "a.txt"), join(ws.root, "b.txt"));
    const output = await run(
      sandboxed,
      `${append("hl.txt")}; chmod 777 hl.txt; truncate -s 0 hl.txt; ${append("b.txt")}; ${append("new.txt")}`,
    );
    expect(output.split("\n")[0]).toBe("EROFS");
    expect(readFileSync(victim, "utf8")).toBe("store\n");
    expect(readFileSync(join(ws.root, "a.txt"), "utf8")).toBe("a\nATK\n");
    expect(readFileSync(join(ws.root, "new.txt"), "utf8")).toBe("ATK\n");
    await run(unguarded, append("hl.txt"));
    expect(readFileSync(victim, "utf8")).toBe("store\nATK\n");
  });

  it(`R-S9: a package store's tree (pnpm's node_modules/.pnpm, ${MOUNT_BUDGET * 4} packages) is one read-only bind, said in the result, not walked again by the next call, which still sees a new link elsewhere; the rest of the workspace stays writable; without the binds the store changes (control)`, async () => {
    const victims: string[] = [];
    for (let index = 0; index < MOUNT_BUDGET * 4; index++)
      victims.push(
        linkedOut(`node_modules/.pnpm/p${index}@1.0.0/node_modules/p${index}/index.js`, `${index}\n`),
      );
    put(join(ws.root, "node_modules/.pnpm/lock.yaml"), "lockfileVersion: 9\n");
    put(join(ws.root, "src/main.js"), "main\n");
    const target = "node_modules/.pnpm/p7@1.0.0/node_modules/p7/index.js";
    const output = await run(sandboxed, `${append(target)}; ${append("src/main.js")}`);
    expect(output).toMatch(/^EROFS\nwrote\n/);
    expect(output).toMatch(/node_modules was read-only in the sandbox: 256 of its files are hard links/);
    expect(readFileSync(victims[7] as string, "utf8")).toBe("7\n");
    expect(readFileSync(join(ws.root, "src/main.js"), "utf8")).toBe("main\nATK\n");
    // The next call: node_modules is not walked again, and a link made since in a changed directory is seen.
    const vendored = linkedOut("src/vendored.js");
    expect(await run(sandboxed, `${append(target)}; ${append("src/vendored.js")}`)).toMatch(
      /^EROFS\nEROFS\n/,
    );
    expect(readFileSync(vendored, "utf8")).toBe("store\n");
    expect(readFileSync(victims[7] as string, "utf8")).toBe("7\n");
    await run(unguarded, append(target));
    expect(readFileSync(victims[7] as string, "utf8")).toBe("7\nATK\n");
  });

  it("R-S9: a local clone's packs shared with the source repository cannot be written, and git commit still works inside the sandbox; without the binds the source's pack changes (control)", async () => {
    const source = join(outside.root, "source");
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", ["-c", "user.email=t@t", "-c", "user.name=t", ...args], { cwd, encoding: "utf8" });
    mkdirSync(source);
    git(source, "init", "-q");
    put(join(source, "a.txt"), "a\n");
    git(source, "add", "a.txt");
    git(source, "commit", "-q", "-m", "one");
    git(source, "gc", "-q");
    const clone = join(ws.root, "clone");
    git(ws.root, "clone", "-q", "--local", source, clone);
    const pack = git(clone, "rev-parse", "--git-path", "objects/pack").trim();
    const packFile = execFileSync("sh", ["-c", `ls ${join(clone, pack)}/*.pack`], {
      encoding: "utf8",
    }).trim();
    const before = readFileSync(packFile);
    const output = await run(
      sandboxed,
      `${append(packFile)}; cd clone && echo b > b.txt && git add b.txt && git -c user.email=t@t -c user.name=t commit -q -m two && git log --format=%s | head -1`,
    );
    expect(output).toBe("EROFS\ntwo");
    expect(readFileSync(packFile.replace(clone, source))).toEqual(before);
    await run(unguarded, append(packFile));
    expect(readFileSync(packFile.replace(clone, source)).length).toBe(before.length + 4);
  });

  it(`R-S9: outside links spread over more than ${MOUNT_BUDGET} directories that also hold the project's own files are refused with the fix, and the command does not run`, async () => {
    for (let index = 0; index < MOUNT_BUDGET + 10; index++) {
      linkedOut(`spread/d${index}/linked.txt`);
      put(join(ws.root, `spread/d${index}/own.txt`), "own\n");
    }
    const output = await run(sandboxed, "touch ran.txt");
    expect(output).toMatch(
      /cannot hold 74 files in the workspace read-only: they are hard links to files outside it/,
    );
    expect(output).toMatch(/package-import-method=copy\) or run with --sandbox off/);
    expect(() => readFileSync(join(ws.root, "ran.txt"))).toThrow();
  });
});
