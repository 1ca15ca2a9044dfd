import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { git, globalConfigPin } from "./git-command.js";

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), "forkloop-git-pin-"));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

describe("R-S7: the isolation git's global config is fixed for both of a call's runs", () => {
  const env = () => ({ HOME: home, XDG_CONFIG_HOME: join(home, ".config") });

  it("no global config: both runs read none, so one written between them is never read", async () => {
    expect(await globalConfigPin(env())).toEqual({ GIT_CONFIG_GLOBAL: "/dev/null" });
    // What git then sees: a ~/.gitconfig that appears after the pin is not read.
    await writeFile(join(home, ".gitconfig"), "[user]\n\tname = planted\n");
    const seen = await git(home, ["config", "--global", "user.name"], undefined, {
      ...env(),
      GIT_CONFIG_GLOBAL: "/dev/null",
    });
    expect(seen.stdout.toString()).toBe("");
    const control = await git(home, ["config", "--global", "user.name"], undefined, env());
    expect(control.stdout.toString().trim()).toBe("planted");
  });

  it("one global config: that file; both, or one the caller names: git's own choice", async () => {
    await writeFile(join(home, ".gitconfig"), "");
    expect(await globalConfigPin(env())).toEqual({ GIT_CONFIG_GLOBAL: join(home, ".gitconfig") });
    await mkdir(join(home, ".config", "git"), { recursive: true });
    await writeFile(join(home, ".config", "git", "config"), "");
    expect(await globalConfigPin(env())).toEqual({});
    expect(await globalConfigPin({ ...env(), GIT_CONFIG_GLOBAL: "/etc/mine" })).toEqual({});
  });
});
