import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { OptionsError, query } from "@forkloop/sdk";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X3, R-K2: one mapping of Claude Code's print-mode flags (claudeFlagOptions): a flag sends the
// same requests through `forkloop run --X` as through `query({ options: { extraArgs: { X } } })`,
// against the simulator over HTTP, in this process.
const project = useSimProject("claude-flags-parity", async (dir) => {
  await writeFile(
    join(dir, "schema.json"),
    JSON.stringify({ type: "object", properties: { n: { type: "number" } } }),
  );
  await mkdir(join(dir, "extra"));
  await mkdir(join(dir, ".claude", "agents"), { recursive: true });
  await writeFile(
    join(dir, ".claude", "agents", "auditor.md"),
    "---\nname: auditor\ndescription: Audits\ntools: Read, Bash\n---\nYou audit. AUDITOR-PROMPT.\n",
  );
});

const SCHEMA = JSON.stringify({ type: "object", properties: { name: { type: "string", minLength: 2 } } });

/** Each shared flag: its argv, and the same flag as extraArgs. */
const CASES: readonly { name: string; argv: string[]; extraArgs: Record<string, string | null> }[] = [
  { name: "--model", argv: ["--model", "haiku"], extraArgs: { model: "haiku" } },
  {
    name: "--fallback-model a,b",
    argv: ["--fallback-model", "haiku,sonnet"],
    extraArgs: { "fallback-model": "haiku,sonnet" },
  },
  { name: "--max-turns", argv: ["--max-turns", "2"], extraArgs: { "max-turns": "2" } },
  {
    name: "--system-prompt",
    argv: ["--system-prompt", "You are TERSE."],
    extraArgs: { "system-prompt": "You are TERSE." },
  },
  {
    name: "--append-system-prompt",
    argv: ["--append-system-prompt", "Say OWL."],
    extraArgs: { "append-system-prompt": "Say OWL." },
  },
  {
    name: "--system-prompt with --append-system-prompt (combined)",
    argv: ["--system-prompt", "You are TERSE.", "--append-system-prompt", "Say OWL."],
    extraArgs: { "system-prompt": "You are TERSE.", "append-system-prompt": "Say OWL." },
  },
  {
    name: "--json-schema inline (apiOutputSchema)",
    argv: ["--json-schema", SCHEMA],
    extraArgs: { "json-schema": SCHEMA },
  },
  {
    name: "--json-schema FILE",
    argv: ["--json-schema", "schema.json"],
    extraArgs: { "json-schema": "schema.json" },
  },
  {
    name: "--settings JSON",
    argv: ["--settings", '{"permissions":{"deny":["WebFetch"]}}'],
    extraArgs: { settings: '{"permissions":{"deny":["WebFetch"]}}' },
  },
  { name: "--tools", argv: ["--tools", "Read,Grep"], extraArgs: { tools: "Read,Grep" } },
  {
    name: "--disallowed-tools",
    argv: ["--disallowed-tools", "Bash"],
    extraArgs: { disallowedTools: "Bash" },
  },
  { name: "--allowed-tools", argv: ["--allowed-tools", "Read"], extraArgs: { allowedTools: "Read" } },
  { name: "--bare (its tool set)", argv: ["--bare"], extraArgs: { bare: null } },
  { name: "--restricted", argv: ["--restricted"], extraArgs: { restricted: null } },
  { name: "--safe-mode", argv: ["--safe-mode"], extraArgs: { "safe-mode": null } },
  {
    name: "--dangerously-skip-permissions",
    argv: ["--dangerously-skip-permissions"],
    extraArgs: { "dangerously-skip-permissions": null },
  },
  {
    name: "--permission-mode",
    argv: ["--permission-mode", "plan"],
    extraArgs: { "permission-mode": "plan" },
  },
  { name: "--effort", argv: ["--effort", "low"], extraArgs: { effort: "low" } },
  {
    name: "--setting-sources",
    argv: ["--setting-sources", "user"],
    extraArgs: { "setting-sources": "user" },
  },
  { name: "--add-dir (relative)", argv: ["--add-dir", "extra"], extraArgs: { "add-dir": "extra" } },
  { name: "--max-budget-usd", argv: ["--max-budget-usd", "5"], extraArgs: { "max-budget-usd": "5" } },
  {
    name: "--permission-mode manual (Claude Code's default)",
    argv: ["--permission-mode", "manual"],
    extraArgs: { "permission-mode": "manual" },
  },
  // --agent: one resolver (withMainAgent) for the CLI and query()'s agent, with the flags beside it.
  { name: "--agent (a project agent file)", argv: ["--agent", "auditor"], extraArgs: { agent: "auditor" } },
  {
    name: "--agent with --restricted (Bash stays out)",
    argv: ["--restricted", "--agent", "auditor"],
    extraArgs: { restricted: null, agent: "auditor" },
  },
  {
    name: "--agent with --bare (the agent's tools replace bare's set)",
    argv: ["--bare", "--agent", "auditor"],
    extraArgs: { bare: null, agent: "auditor" },
  },
  {
    name: "--agent with --append-system-prompt",
    argv: ["--agent", "auditor", "--append-system-prompt", "Say OWL."],
    extraArgs: { agent: "auditor", "append-system-prompt": "Say OWL." },
  },
];

/** A value each side refuses before any request, in the same words: the flag, what it takes, an example. */
const BAD_VALUES: readonly {
  name: string;
  argv: string[];
  extraArgs: Record<string, string>;
  says: RegExp;
}[] = [
  {
    name: "--permission-mode yolo",
    argv: ["--permission-mode", "yolo"],
    extraArgs: { "permission-mode": "yolo" },
    says: /^--permission-mode: must be one of default, acceptEdits, .*not "yolo"; e\.g\. --permission-mode acceptEdits\.$/,
  },
  {
    name: "--effort extreme",
    argv: ["--effort", "extreme"],
    extraArgs: { effort: "extreme" },
    says: /^--effort: must be low, medium, high, xhigh or max, not "extreme"; e\.g\. --effort high\.$/,
  },
  {
    name: "--setting-sources user,cloud",
    argv: ["--setting-sources", "user,cloud"],
    extraArgs: { "setting-sources": "user,cloud" },
    says: /^--setting-sources: each must be user, project or local, not "cloud"; e\.g\. --setting-sources user,project/,
  },
];

const PROMPT = "Say hello.";

/** The main loop's request bodies since `from`, without what differs per session. */
async function mainRequests(from: number): Promise<unknown[]> {
  return (await project.sim.requests())
    .slice(from)
    .filter((record) => record.querySource === "sdk")
    .map((record) => {
      const { metadata: _session, ...body } = JSON.parse(record.rawBody) as Record<string, unknown>;
      return body;
    });
}

async function viaCli(argv: readonly string[]): Promise<unknown[]> {
  const from = (await project.sim.requests()).length;
  const result = await runCliInProcess(
    ["-p", PROMPT, "--output-format", "stream-json", "--verbose", ...argv],
    {
      cwd: project.dir,
      env: project.env(),
    },
  );
  expect(result.code, result.stderr).toBe(0);
  return mainRequests(from);
}

async function viaExtraArgs(extraArgs: Record<string, string | null>): Promise<unknown[]> {
  const from = (await project.sim.requests()).length;
  for await (const _message of query({
    prompt: PROMPT,
    options: {
      cwd: project.dir,
      env: { ...process.env, ...project.env() },
      // What `forkloop run` sets beside the flags.
      settingSources: ["user", "project", "local"],
      allowDangerouslySkipPermissions: true,
      extraArgs,
    },
  })) {
    // the requests are the subject
  }
  return mainRequests(from);
}

describe("R-X3, R-K2: a Claude Code flag means the same in forkloop run and in extraArgs", () => {
  it.each(CASES)("R-X3, R-K2: $name sends the same requests", async ({ argv, extraArgs }) => {
    const cli = await viaCli(argv);
    expect(cli.length).toBeGreaterThan(0);
    expect(await viaExtraArgs(extraArgs)).toEqual(cli);
  });
});

describe("R-X3, R-K2: a bad flag value is refused the same way by forkloop run and by extraArgs", () => {
  it.each(BAD_VALUES)(
    "R-X3, R-K2: $name is exit 2 in the CLI and the same OptionsError in query(), before any request",
    async ({ argv, extraArgs, says }) => {
      const from = (await project.sim.requests()).length;
      const cli = await runCliInProcess(["-p", PROMPT, ...argv], { cwd: project.dir, env: project.env() });
      expect(cli.code, cli.stderr).toBe(2);
      let refused: unknown;
      try {
        for await (const _message of query({
          prompt: PROMPT,
          options: { cwd: project.dir, env: { ...process.env, ...project.env() }, extraArgs },
        })) {
          // nothing is expected: the options are refused
        }
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(OptionsError);
      const message = (refused as OptionsError).message;
      expect(message).toMatch(says);
      expect(cli.stderr).toContain(message);
      expect((await project.sim.requests()).length).toBe(from);
    },
  );
});
