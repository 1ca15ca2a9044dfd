import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempWorkspace } from "../testing/index.js";
import { loadSettings } from "./load-settings.js";

const ws = useTempWorkspace();
const project = () => join(ws.root, "project");
const home = () => join(ws.root, "home");

function put(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
}

async function load() {
  mkdirSync(project(), { recursive: true });
  return loadSettings(project(), { home: home() });
}

async function loadError(): Promise<string> {
  const result = await load();
  if (result.ok) throw new Error("expected a settings error");
  return result.error;
}

describe("loadSettings", () => {
  it("R-P1: no settings files gives empty settings", async () => {
    expect(await load()).toEqual({
      ok: true,
      settings: { permissions: { allow: [], ask: [], deny: [] }, hooks: {} },
      sources: [],
    });
  });

  it("R-P1: merges home, project and local files of .claude and .forkloop; most specific single values win", async () => {
    const hook = { hooks: [{ type: "command", command: "true" }] };
    put(join(home(), ".claude/settings.json"), {
      permissions: { allow: ["Bash(ls:*)"], defaultMode: "plan" },
      theme: "dark",
    });
    put(join(project(), ".claude/settings.json"), {
      permissions: { deny: ["Read(./.env)"], additionalDirectories: ["../shared", "/abs/dir"] },
      hooks: { PreToolUse: [{ matcher: "Bash", ...hook }] },
    });
    put(join(project(), ".forkloop/settings.json"), {
      permissions: { allow: ["Edit(src/**)", "Bash(ls:*)"], defaultMode: "acceptEdits" },
      hooks: { PreToolUse: [hook], Stop: [hook] },
      env: { A: "1" },
    });
    put(join(project(), ".forkloop/settings.local.json"), {
      permissions: { ask: ["Bash(git push:*)"] },
      model: "m",
    });
    const result = await load();
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.sources).toEqual([
      join(home(), ".claude/settings.json"),
      join(project(), ".claude/settings.json"),
      join(project(), ".forkloop/settings.json"),
      join(project(), ".forkloop/settings.local.json"),
    ]);
    expect(result.settings.permissions).toEqual({
      allow: ["Bash(ls:*)", "Edit(src/**)"],
      ask: ["Bash(git push:*)"],
      deny: ["Read(./.env)"],
      defaultMode: "acceptEdits",
      additionalDirectories: [join(ws.root, "shared"), "/abs/dir"],
    });
    expect(result.settings.hooks.PreToolUse).toHaveLength(2);
    expect(result.settings.hooks.Stop).toHaveLength(1);
    expect(result.settings.env).toEqual({ A: "1" });
    expect(result.settings.model).toBe("m");
  });

  it("R-P1: invalid JSON names the file", async () => {
    put(join(project(), ".forkloop/settings.json"), '{ "permissions": { "allow": [], } }');
    expect(await loadError()).toMatch(
      /\.forkloop\/settings\.json: not valid JSON .* Fix: correct the syntax/,
    );
  });

  it("R-P1: a bad rule names the file, the key path and the fix", async () => {
    put(join(project(), ".claude/settings.json"), {
      permissions: { allow: ["Bash(ls:*)", "Bash(npm test"] },
    });
    const error = await loadError();
    expect(error).toContain(`${join(project(), ".claude/settings.json")}: permissions.allow[1]:`);
    expect(error).toMatch(/missing the closing "\)"/);
    expect(error).toMatch(/Fix: write rules like "Bash\(npm test:\*\)"/);
  });

  it("R-P1: an unknown hook event, a bad mode, a bad matcher and a bad timeout are explained", async () => {
    put(join(project(), ".forkloop/settings.json"), {
      permissions: { defaultMode: "yolo" },
      hooks: {
        PreToolUSe: [],
        PostToolUse: [{ matcher: "Edit(", hooks: [{ type: "command", command: "x", timeout: -1 }] }],
      },
    });
    const error = await loadError();
    expect(error).toMatch(
      /permissions\.defaultMode: .*Fix: use one of default, acceptEdits, plan, bypassPermissions, dontAsk, auto/,
    );
    expect(error).toMatch(
      /hooks: .*\(PreToolUSe\)\. Fix: use one of the hook events PreToolUse, PostToolUse/,
    );
    expect(error).toMatch(/hooks\.PostToolUse\[0\]\.matcher: not a valid regular expression/);
    expect(error).toMatch(/hooks\.PostToolUse\[0\]\.hooks\[0\]\.timeout: /);
  });
});
