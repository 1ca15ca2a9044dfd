/**
 * R-P1 "plan mode: 0 mutations of files or git state through any tool, hook or sub-agent",
 * through the CLI: the main agent and an Agent sub-agent both ask for every kind of write and
 * exec, while a PreToolUse hook (the user's own settings) answers `allow` for every call. In plan
 * mode nothing may change; the same run in default mode is the control that shows every call does
 * get through when the hook's allow is honoured, so the test can fail.
 */
import { execFileSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

let base: string;

beforeAll(() => {
  base = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-plan-hold-")));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null" },
  });

/** Every mutation `who` (main or the sub-agent) asks for, each leaving its own trace when it runs. */
function mutations(who: string): Record<string, unknown>[] {
  const call = (name: string, input: Record<string, unknown>) => ({ type: "tool_use", name, input });
  return [
    call("Write", { file_path: `m/${who}-write`, content: "x" }),
    call("Read", { file_path: `${who}.txt` }),
    call("Edit", { file_path: `${who}.txt`, old_string: "original", new_string: "pwned" }),
    call("Bash", { command: `touch m/${who}-bash` }),
    call("Bash", { command: `echo x > m/${who}-redirect` }),
    call("Bash", { command: `rm victims/${who}` }),
    call("Bash", { command: `git branch ${who}-branch` }),
    call("Bash", { command: `git -c user.email=t@t -c user.name=t commit -q --allow-empty -m ${who}` }),
  ];
}

/** What the mutations leave behind when they run, by name (empty = nothing changed). */
function traces(root: string, who: string): string[] {
  const found: string[] = [];
  for (const name of ["write", "bash", "redirect"])
    if (existsSync(join(root, "m", `${who}-${name}`))) found.push(`${who}-${name}`);
  if (readFileSync(join(root, `${who}.txt`), "utf8") !== "original\n") found.push(`${who}-edit`);
  if (!existsSync(join(root, "victims", who))) found.push(`${who}-rm`);
  const refs = git(root, "for-each-ref");
  if (refs.includes(`${who}-branch`)) found.push(`${who}-branch`);
  if (git(root, "log", "--format=%s").includes(who)) found.push(`${who}-commit`);
  return found;
}

/** A workspace whose user-level settings (HOME is the workspace) have a PreToolUse hook allowing every call. */
function workspace(name: string): string {
  const root = join(base, name);
  mkdirSync(join(root, "m"), { recursive: true });
  mkdirSync(join(root, "victims"));
  mkdirSync(join(root, ".forkloop"));
  for (const who of ["main", "sub"]) {
    writeFileSync(join(root, `${who}.txt`), "original\n");
    writeFileSync(join(root, "victims", who), "victim\n");
  }
  const allow = JSON.stringify({
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
      permissionDecisionReason: "hook",
    },
  });
  writeFileSync(
    join(root, ".forkloop/settings.json"),
    JSON.stringify({
      hooks: { PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: `echo '${allow}'` }] }] },
    }),
  );
  git(root, "init", "-q", "-b", "main");
  git(root, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "init");
  return root;
}

async function runIn(
  mode: "plan" | "default",
): Promise<{ found: string[]; refsChanged: boolean; sent: string }> {
  const root = workspace(mode);
  const refsBefore = git(root, "for-each-ref");
  const scenario = join(base, `${mode}-scenario.json`);
  writeFileSync(
    scenario,
    JSON.stringify({
      rules: [
        { match: { querySource: "agent:general-purpose" }, reply: { content: mutations("sub") }, times: 1 },
        {
          match: { turn: 0, querySource: "sdk" },
          reply: {
            content: [
              ...mutations("main"),
              { type: "tool_use", name: "Agent", input: { description: "change", prompt: "Change things." } },
            ],
          },
        },
      ],
      fallback: { content: [{ type: "text", text: "done (scripted by the simulator)" }] },
    }),
  );
  const sim = await startSimInProcess(base, ["--scenario", scenario]);
  try {
    // --sandbox off: plan mode itself must hold, not the sandbox around Bash.
    const result = await runCliInProcess(["run", "change", "--permission-mode", mode, "--sandbox", "off"], {
      cwd: root,
      env: sim.env,
    });
    expect(result.code, result.stderr).toBe(0);
    const sent = (await sim.requests()).map((request) => request.rawBody).join("\n");
    return {
      found: [...traces(root, "main"), ...traces(root, "sub")],
      refsChanged: git(root, "for-each-ref") !== refsBefore,
      sent,
    };
  } finally {
    await sim.stop();
  }
}

describe("R-P1 plan mode: nothing changes through any tool, hook or sub-agent", () => {
  it("R-P1 plan mode: a PreToolUse hook's allow gets no write or exec past plan mode, in the main agent or an Agent sub-agent; in default mode the same calls run", async () => {
    const plan = await runIn("plan");
    expect(plan.found).toEqual([]);
    expect(plan.refsChanged, "git refs").toBe(false);
    // The sub-agent did start and ask (its calls were answered with plan mode's refusal).
    expect(plan.sent).toContain("Change things.");
    expect(plan.sent).toMatch(/Plan mode allows only read-only tools/);

    const control = await runIn("default");
    expect(control.found.sort()).toEqual(
      ["bash", "branch", "commit", "edit", "redirect", "rm", "write"]
        .flatMap((name) => [`main-${name}`, `sub-${name}`])
        .sort(),
    );
  }, 180_000);
});
