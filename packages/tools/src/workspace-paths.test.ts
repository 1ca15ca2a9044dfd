import { execFileSync } from "node:child_process";
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTempWorkspace, type TempWorkspace } from "./testing/index.js";
import { resolveInWorkspace, SHM_COPIES_DIR } from "./workspace-paths.js";

let outer: TempWorkspace;
let root: string;
let outside: string;
let socketServer: Server;
/** mknod needs root; when the tests do not run as root the device row checks /dev/null instead. */
const isRoot = process.getuid?.() === 0;

beforeAll(async () => {
  // Layout: <outer>/ws is the workspace, <outer>/secret lies beside it.
  outer = createTempWorkspace("forkloop-confine-");
  root = join(outer.root, "ws");
  outside = join(outer.root, "secret");
  mkdirSync(join(root, "src", "deep"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(outside, "key.pem"), "secret");
  writeFileSync(join(root, "src", "a.ts"), "export {}\n");
  symlinkSync(outside, join(root, "link-out"));
  symlinkSync(join(outside, "key.pem"), join(root, "key-link"));
  symlinkSync("../../secret/new-file", join(root, "src", "dangling-out"));
  symlinkSync("/etc/passwd", join(root, "passwd"));
  symlinkSync("/proc/self/environ", join(root, "environ"));
  symlinkSync("/dev/zero", join(root, "zero"));
  symlinkSync("loop-b", join(root, "loop-a"));
  symlinkSync("loop-a", join(root, "loop-b"));
  symlinkSync(join(root, "src"), join(root, "src-link"));
  symlinkSync("a.ts", join(root, "src", "a-link.ts"));
  symlinkSync(join(root, "link-out"), join(root, "chain-out"));
  execFileSync("mkfifo", [join(root, "fifo")]);
  symlinkSync(join(root, "fifo"), join(root, "fifo-link"));
  if (isRoot) execFileSync("mknod", [join(root, "null-device"), "c", "1", "3"]);
  else symlinkSync("/dev/null", join(root, "null-device"));
  socketServer = createServer();
  await new Promise<void>((resolve) => socketServer.listen(join(root, "agent.sock"), resolve));
});

afterAll(async () => {
  await new Promise((resolve) => socketServer.close(resolve));
  outer.cleanup();
});

describe("R-P1: workspace confinement refuses attack paths", () => {
  const attacks: ReadonlyArray<readonly [string, () => string, RegExp]> = [
    ["parent escape", () => "../secret/key.pem", /outside the workspace/],
    ["deep parent escape", () => "src/deep/../../../secret/key.pem", /outside the workspace/],
    ["many parents", () => "../../../../../../../../etc/passwd", /outside the workspace/],
    ["absolute outside", () => join(outside, "key.pem"), /outside the workspace/],
    ["absolute /etc/passwd", () => "/etc/passwd", /outside the workspace/],
    ["absolute root", () => "/", /outside the workspace/],
    ["sibling with shared prefix", () => `${root}-evil/file`, /outside the workspace/],
    ["sibling via relative prefix", () => "../ws-evil/file", /outside the workspace/],
    ["symlinked dir escape", () => "link-out/key.pem", /outside the workspace/],
    ["symlinked dir itself", () => "link-out", /outside the workspace/],
    ["new file through escaping dir link", () => "link-out/new.txt", /outside the workspace/],
    ["symlinked file escape", () => "key-link", /outside the workspace/],
    ["dangling link escaping on write", () => "src/dangling-out", /outside the workspace/],
    ["link to /etc/passwd", () => "passwd", /outside the workspace/],
    ["chain of links escaping", () => "chain-out/key.pem", /outside the workspace/],
    ["link to /proc", () => "environ", /pseudo-filesystem/],
    ["link to /dev/zero", () => "zero", /pseudo-filesystem/],
    ["/proc/self/environ", () => "/proc/self/environ", /pseudo-filesystem/],
    ["/proc/self/root escape", () => "/proc/self/root/etc/passwd", /pseudo-filesystem/],
    ["/proc/self/cwd", () => "/proc/self/cwd/secret", /pseudo-filesystem/],
    ["/dev/null", () => "/dev/null", /pseudo-filesystem/],
    ["/dev/stdin", () => "/dev/stdin", /pseudo-filesystem/],
    ["/sys/kernel", () => "/sys/kernel/notes", /pseudo-filesystem/],
    ["/dev via parents", () => "../../../../../../../dev/random", /pseudo-filesystem/],
    ["FIFO inside workspace", () => "fifo", /FIFO/],
    ["link to FIFO", () => "fifo-link", /FIFO/],
    ["symlink loop", () => "loop-a", /symbolic links/],
    [
      "device file inside the workspace",
      () => "null-device",
      isRoot ? /character device/ : /pseudo-filesystem/,
    ],
    ["unix socket inside the workspace", () => "agent.sock", /socket/],
    ["NUL byte", () => "src/a.ts\0.png", /NUL/],
    ["NUL byte escape", () => "\0../../etc/passwd", /NUL/],
    ["tilde home", () => "~/.ssh/id_rsa", /outside the workspace/],
    ["bare tilde", () => "~", /outside the workspace/],
    ["tilde user", () => "~root/.bashrc", /~user/],
    ["empty path", () => "", /empty/],
    ["dot-dot only", () => "..", /outside the workspace/],
    ["trailing slash escape", () => "../secret/", /outside the workspace/],
    ["double slash absolute", () => `//${outside.slice(1)}/key.pem`, /outside the workspace/],
  ];

  it.each(attacks)("R-P1: refuses %s", (_name, makePath, message) => {
    const result = resolveInWorkspace(makePath(), { cwd: root, workspaceRoots: [root] });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error).toMatch(message);
  });

  it("R-P1: the attack table has at least 30 entries", () => {
    expect(attacks.length).toBeGreaterThanOrEqual(30);
  });
});

describe("R-P1: workspace confinement allows paths inside", () => {
  const allowed: ReadonlyArray<readonly [string, () => string, () => string]> = [
    ["relative file", () => "src/a.ts", () => join(root, "src", "a.ts")],
    ["absolute file", () => join(root, "src", "a.ts"), () => join(root, "src", "a.ts")],
    ["dot segments staying inside", () => "src/deep/../a.ts", () => join(root, "src", "a.ts")],
    ["new file in new dirs", () => "new/dir/file.txt", () => join(root, "new", "dir", "file.txt")],
    ["internal dir link", () => "src-link/a.ts", () => join(root, "src", "a.ts")],
    ["internal file link", () => "src/a-link.ts", () => join(root, "src", "a.ts")],
    ["the root itself", () => ".", () => root],
  ];

  it.each(allowed)("R-P1: allows %s", (_name, makePath, expected) => {
    expect(resolveInWorkspace(makePath(), { cwd: root, workspaceRoots: [root] })).toEqual({
      ok: true,
      path: expected(),
    });
  });

  it("R-P1: a second workspace root (additionalDirectories) is allowed", () => {
    const result = resolveInWorkspace(join(outside, "key.pem"), {
      cwd: root,
      workspaceRoots: [root, outside],
    });
    expect(result).toEqual({ ok: true, path: join(outside, "key.pem") });
  });

  it("R-P1: ~ expands to the home directory when home is a workspace root", () => {
    const result = resolveInWorkspace("~/x.txt", { cwd: root, workspaceRoots: [homedir()] });
    expect(result.ok).toBe(true);
  });
});

describe("R-B2, R-P1: forkloop's own item copies on /dev/shm", () => {
  it("R-B2: a workspace root in /dev/shm/forkloop-<uid>/ (a batch's copies in memory) lets file tools work inside it; the rest of /dev, /dev/shm and that directory itself stay refused, and its other copies lie outside the root", () => {
    const copies = join(SHM_COPIES_DIR, `paths-test-${process.pid}`);
    const copy = join(copies, "item");
    mkdirSync(join(copy, "src"), { recursive: true, mode: 0o700 });
    mkdirSync(join(copies, "other"), { recursive: true });
    writeFileSync(join(copy, "src", "a.ts"), "a\n");
    symlinkSync("/dev/zero", join(copy, "zero"));
    try {
      const where = { cwd: copy, workspaceRoots: [copy] };
      expect(resolveInWorkspace("src/a.ts", where)).toEqual({ ok: true, path: join(copy, "src", "a.ts") });
      expect(resolveInWorkspace("new/file.txt", where)).toEqual({
        ok: true,
        path: join(copy, "new", "file.txt"),
      });
      for (const path of ["zero", "/dev/random", "/dev/shm/x", SHM_COPIES_DIR])
        expect(resolveInWorkspace(path, where), path).toMatchObject({
          ok: false,
          error: expect.stringMatching(/pseudo-filesystem/),
        });
      expect(resolveInWorkspace("../other/a.ts", where)).toMatchObject({
        ok: false,
        error: expect.stringMatching(/outside the workspace/),
      });
    } finally {
      rmSync(copies, { recursive: true, force: true });
    }
  });
});
