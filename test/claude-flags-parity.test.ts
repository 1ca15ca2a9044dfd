import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { query } from "@forkloop/sdk";
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
