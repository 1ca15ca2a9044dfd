import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAgentDefinitionsDetailed, parseAgentDefinition } from "./agent-definitions.js";
import { directoryChain } from "./memory-files.js";
import { assembleSession } from "./session-assembly.js";
import { loadSkillsDetailed } from "./skills.js";

let root: string;
let repo: string;
let home: string;

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-assembly-")));
  repo = join(root, "repo");
  home = join(root, "home");
  mkdirSync(join(repo, "pkg", "sub"), { recursive: true });
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
  git("init", "-q", "-b", "trunk");
  git("config", "user.email", "t@example.com");
  git("config", "user.name", "t");
  write(join(repo, "CLAUDE.md"), "Root rule: use tabs.");
  write(join(repo, "pkg", "AGENTS.md"), "Package rule: no network.");
  write(join(repo, "pkg", "sub", "MEMORY.md"), "Sub note: the parser is slow.");
  write(join(root, "CLAUDE.md"), "Outside the repo: must not be read.");
  write(join(home, ".claude", "CLAUDE.md"), "User rule: be brief.");
  write(
    join(repo, ".forkloop", "skills", "release", "SKILL.md"),
    "---\ndescription: Cut a release\nallowed-tools: Bash, Read\n---\nRun the release steps.",
  );
  write(
    join(repo, ".claude", "skills", "lint", "SKILL.md"),
    "---\nname: lint\ndescription: Lint\n---\nRun the linter.",
  );
  write(join(repo, ".claude", "skills", "broken", "SKILL.md"), "---\nname: [unclosed\n---\nbody");
  write(
    join(repo, ".claude", "agents", "reviewer.md"),
    "---\nname: reviewer\ndescription: Reviews diffs\ntools: Read, Grep\nmodel: inherit\nmaxTurns: 5\n---\nYou review code.",
  );
  write(join(repo, ".forkloop", "agents", "bad.md"), "---\ndescription: no name\n---\nx");
  git("add", ".");
  git("commit", "-q", "-m", "initial commit");
  write(join(repo, "pkg", "changed.txt"), "new");
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("session assembly (§1.2 prefetch)", () => {
  it("builds two cached system blocks: stable identity/rules, then environment, memory, git and mode", async () => {
    const session = await assembleSession({
      cwd: join(repo, "pkg", "sub"),
      model: "claude-sonnet-5",
      permissionMode: "plan",
      tools: [],
      home,
      appendSystemPrompt: "Appended by the caller.",
      now: new Date("2026-11-30T12:00:00Z"),
    });
    expect(session.systemPrompt).toHaveLength(2);
    for (const block of session.systemPrompt) expect(block.cache_control).toEqual({ type: "ephemeral" });
    const [stable, sessionBlock] = session.systemPrompt.map((block) => block.text);
    expect(stable).toContain("forkloop");
    expect(stable).not.toContain(repo);
    // Memory: user first, then from the repository root down to cwd; nothing above the repo.
    const order = ["User rule", "Root rule", "Package rule", "Sub note"].map(
      (text) => sessionBlock?.indexOf(text) ?? -1,
    );
    expect(order.every((position) => position >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(sessionBlock).not.toContain("Outside the repo");
    expect(sessionBlock).toContain("Current branch: trunk");
    expect(sessionBlock).toMatch(/\?\? .*changed\.txt/);
    expect(sessionBlock).toContain("initial commit");
    expect(sessionBlock).toContain("Permission mode: plan");
    expect(sessionBlock).toContain("Today's date: 2026-11-30");
    expect(sessionBlock?.endsWith("Appended by the caller.")).toBe(true);
    expect(session.repoRoot).toBe(repo);
    expect(session.skills.map((skill) => skill.name).sort()).toEqual(["lint", "release"]);
    expect(session.agentDefinitions.map((definition) => definition.name).sort()).toEqual([
      "Explore",
      "Plan",
      "fork",
      "general-purpose",
      "reviewer",
    ]);
    expect(session.warnings.some((warning) => warning.includes("broken"))).toBe(true);
    expect(session.warnings.some((warning) => warning.includes("bad.md") && warning.includes("name"))).toBe(
      true,
    );
  });

  it("is byte-stable for the same session inputs (the cache prefix must not move, R-F3)", async () => {
    const options = {
      cwd: repo,
      model: "claude-sonnet-5",
      permissionMode: "default" as const,
      tools: [],
      home,
      now: new Date("2026-11-30T12:00:00Z"),
    };
    const [a, b] = await Promise.all([assembleSession(options), assembleSession(options)]);
    expect(JSON.stringify(a.systemPrompt)).toBe(JSON.stringify(b.systemPrompt));
  });

  it("works outside a git repository (no git block, memory from cwd only)", async () => {
    const outside = join(root, "plain");
    mkdirSync(outside, { recursive: true });
    write(join(outside, "AGENTS.md"), "Plain rule.");
    const session = await assembleSession({
      cwd: outside,
      model: "m",
      permissionMode: "default",
      tools: [],
      home,
    });
    expect(session.gitStatus).toBeNull();
    expect(session.systemPrompt[1]?.text).toContain("Plain rule.");
    expect(session.systemPrompt[1]?.text).not.toContain("Git status");
  });
});

describe("definitions and skills", () => {
  it("parses agent definitions: tools list, inherit model, maxTurns; clear errors", () => {
    const ok = parseAgentDefinition(
      "a.md",
      "---\nname: a\ndescription: d\ntools: [Read, Glob]\nmodel: claude-haiku-4-5\n---\nPrompt.",
    );
    expect(ok).toEqual({
      ok: true,
      definition: {
        name: "a",
        description: "d",
        prompt: "Prompt.",
        tools: ["Read", "Glob"],
        model: "claude-haiku-4-5",
        source: "a.md",
      },
    });
    const bad = parseAgentDefinition("b.md", "---\nname: has space\ndescription: d\n---\n");
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error).toContain('"name"');
  });

  it("definitions from code override files; skills from home lose to the project's", async () => {
    const loaded = await loadAgentDefinitionsDetailed(repo, [
      { name: "reviewer", description: "from code", prompt: "p", source: "code" },
    ]);
    expect(loaded.definitions.find((definition) => definition.name === "reviewer")?.description).toBe(
      "from code",
    );
    write(join(home, ".forkloop", "skills", "lint", "SKILL.md"), "---\ndescription: home lint\n---\nx");
    const skills = await loadSkillsDetailed(repo, { home });
    expect(skills.skills.find((skill) => skill.name === "lint")?.description).toBe("Lint");
    expect(skills.skills.find((skill) => skill.name === "release")?.allowedTools).toEqual(["Bash", "Read"]);
  });

  it("directoryChain walks from the root down to cwd, or just cwd outside it", () => {
    expect(directoryChain("/a/b/c", "/a")).toEqual(["/a", "/a/b", "/a/b/c"]);
    expect(directoryChain("/x/y", "/a")).toEqual(["/x/y"]);
    expect(directoryChain("/x/y", null)).toEqual(["/x/y"]);
  });
});
