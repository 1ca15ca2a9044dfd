import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { batchesDirs, projectKey, projectState, sessionsDir, sessionsDirs } from "./state-dirs.js";

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-state-dirs-")));
  mkdirSync(join(root, "repo", ".git"), { recursive: true });
  mkdirSync(join(root, "repo", "a", "b"), { recursive: true });
  mkdirSync(join(root, "loose"));
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
});

describe("a project's state outside its checkout", () => {
  it("keyed by the git root above cwd (else cwd), under $HOME/.forkloop/projects; <cwd>/.forkloop still searched", () => {
    const nested = projectState({ cwd: join(root, "repo", "a", "b"), env: { HOME: join(root, "home") } });
    expect(nested.projectRoot).toBe(join(root, "repo"));
    expect(nested.dir).toBe(join(root, "home", ".forkloop", "projects", projectKey(join(root, "repo"))));
    expect(sessionsDirs(nested)).toEqual([
      join(nested.dir, "sessions"),
      join(root, "repo", "a", "b", ".forkloop", "sessions"),
    ]);
    const loose = projectState({ cwd: join(root, "loose"), env: { HOME: join(root, "home") } });
    expect(loose.projectRoot).toBe(join(root, "loose"));
    // A worktree's .git is a file: it is a root too.
    writeFileSync(join(root, "repo", "a", ".git"), "gitdir: elsewhere\n");
    expect(projectState({ cwd: join(root, "repo", "a", "b"), env: {} }).projectRoot).toBe(
      join(root, "repo", "a"),
    );
  });

  it("FORKLOOP_HOME moves every project's state; stateDir is taken as it is and nothing else is searched", () => {
    const moved = projectState({
      cwd: join(root, "loose"),
      env: { HOME: "/nowhere", FORKLOOP_HOME: join(root, "fh") },
    });
    expect(sessionsDir(moved)).toBe(
      join(root, "fh", "projects", projectKey(join(root, "loose")), "sessions"),
    );
    const pinned = projectState({ cwd: join(root, "loose"), env: {}, stateDir: "state" });
    expect(batchesDirs(pinned)).toEqual([join(root, "loose", "state", "batches")]);
  });

  it("projectKey: readable like Claude Code's, and paths that read the same stay apart", () => {
    expect(projectKey("/home/me/app")).toMatch(/^-home-me-app-[0-9a-f]{8}$/);
    expect(projectKey("/a/b-c")).not.toBe(projectKey("/a/b/c"));
  });
});
