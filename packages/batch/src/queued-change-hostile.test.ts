import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { executePlan, mergeChanges } from "@forkloop/tools/workspace";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { decodeChanges } from "./queued-change.js";

/**
 * R-B1, R-B4, R-S4: an isolated queued item's change comes back from Redis, where anyone who can
 * write chooses it, so the producer reads it as hostile input: decoded (queued-change.ts), merged
 * (`mergeChanges`) and carried out (`executePlan`) as it would be. Under /var/tmp: the "outside"
 * directory must be a real place the write could land.
 */
let base: string;
let root: string;
let outside: string;
beforeEach(() => {
  base = mkdtempSync(join(existsSync("/var/tmp") ? "/var/tmp" : "/tmp", "forkloop-queued-hostile-"));
  root = join(base, "project");
  outside = join(base, "outside");
  mkdirSync(join(root, ".git", "hooks"), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, "a.txt"), "a\n");
  writeFileSync(join(outside, "victim.txt"), "victim\n");
  // Committed links: a directory and a file of the project that lead out of it.
  symlinkSync(outside, join(root, "vendor"));
  symlinkSync(join(outside, "victim.txt"), join(root, "victim.txt"));
});
afterEach(() => rmSync(base, { recursive: true, force: true }));

const b64 = (text: string) => Buffer.from(text).toString("base64");
const wire = (path: string, after: string, before: string | null = null, mode = 0o755) =>
  JSON.stringify([{ path, before: before === null ? null : b64(before), after: b64(after), mode }]);

/** Decodes, merges and carries out one wire change; what happened, as a word. */
async function applyWire(text: string): Promise<string> {
  let changes: ReturnType<typeof decodeChanges>;
  try {
    changes = decodeChanges(text);
  } catch {
    return "refused when decoded";
  }
  try {
    const merged = await mergeChanges(root, changes, { home: join(base, "home") });
    if (!merged.ok) return `conflict: ${merged.conflicts.map((c) => c.reason).join("; ")}`;
    const done = await executePlan(root, join(base, "plan"), merged.plan, merged.contents);
    return done.written.length > 0 ? "written" : "not written";
  } catch (error) {
    return `refused: ${(error as Error).message}`;
  }
}

describe("R-B4, R-S4: a queued change read back from Redis is hostile input", () => {
  it("R-B4: paths through a symlink out of the workspace, .., absolute paths, .git and settings targets, NUL, odd modes and oversized paths write nothing outside the workspace or to an execution point", async () => {
    const attacks: Record<string, string> = {
      "through a directory link": wire("vendor/evil.sh", "PWNED\n"),
      "through a directory link, ./ first": wire("./vendor/evil2.sh", "PWNED\n"),
      "a file link out, its content known": wire("victim.txt", "PWNED\n", "victim\n"),
      "..": wire("../outside/dotdot.sh", "PWNED\n"),
      absolute: wire(join(outside, "absolute.sh"), "PWNED\n"),
      ".git hook": wire(".git/hooks/post-commit", "#!/bin/sh\ntouch PWNED\n"),
      ".git hook, ./ first": wire("./.git/hooks/pre-commit", "#!/bin/sh\ntouch PWNED\n"),
      settings: wire(".forkloop/settings.json", '{"permissions":{"allow":["Bash"]}}'),
      ".mcp.json": wire(".mcp.json", '{"mcpServers":{"x":{"command":"sh"}}}'),
      "NUL in the path": wire("a.txt\u0000.sh", "PWNED\n"),
      "setuid mode": wire("setuid.sh", "PWNED\n", null, 0o4755),
      "a 5,000-character path": wire("x".repeat(5_000), "PWNED\n"),
      "not base64": JSON.stringify([{ path: "b64.txt", before: null, after: "%%%", mode: 0o644 }]),
    };
    const outcomes: Record<string, string> = {};
    for (const [name, text] of Object.entries(attacks)) outcomes[name] = await applyWire(text);
    for (const [name, outcome] of Object.entries(outcomes)) expect(outcome, name).not.toBe("written");
    expect(outcomes["through a directory link"]).toContain("outside the workspace (a symlink on its way)");
    expect(readFileSync(join(outside, "victim.txt"), "utf8")).toBe("victim\n");
    for (const name of ["evil.sh", "evil2.sh", "dotdot.sh", "absolute.sh"])
      expect(existsSync(join(outside, name)), name).toBe(false);
    expect(existsSync(join(root, ".git", "hooks", "post-commit"))).toBe(false);
    expect(existsSync(join(root, ".git", "hooks", "pre-commit"))).toBe(false);
    expect(existsSync(join(root, ".forkloop", "settings.json"))).toBe(false);
    expect(existsSync(join(root, ".mcp.json"))).toBe(false);
    // Control: the links do lead out — a plain write by the same names lands outside — and an
    // ordinary change is written.
    writeFileSync(join(root, "vendor", "control.sh"), "x");
    expect(existsSync(join(outside, "control.sh"))).toBe(true);
    expect(await applyWire(wire("src/new.ts", "export {};\n", null, 0o644))).toBe("written");
    expect(readFileSync(join(root, "src", "new.ts"), "utf8")).toBe("export {};\n");
  });

  it("R-B4: a plan made before a directory became a link out is not carried out through it (a resume finishes plans later)", async () => {
    mkdirSync(join(root, "lib"));
    const merged = await mergeChanges(root, decodeChanges(wire("lib/late.sh", "PWNED\n")));
    expect(merged.ok).toBe(true);
    if (!merged.ok) return;
    rmSync(join(root, "lib"), { recursive: true });
    symlinkSync(outside, join(root, "lib"));
    const done = await executePlan(root, join(base, "plan"), merged.plan, merged.contents);
    expect(done.diverged).toEqual(["lib/late.sh"]);
    expect(existsSync(join(outside, "late.sh"))).toBe(false);
  });
});
