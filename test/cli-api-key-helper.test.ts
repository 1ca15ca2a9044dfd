import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, type SimHandle, startSimInProcess } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// R-X2: Claude Code's settings `apiKeyHelper` — a shell command printing the key requests
// authenticate with when the environment has none. A program: honoured from the user's files,
// `--settings` and a trusted project's, never from an untrusted project's (R-S5).
let root: string;
let sim: SimHandle;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-api-key-helper-"));
  sim = await startSimInProcess(root);
}, 60_000);
afterAll(async () => {
  await sim?.stop();
  await rm(root, { recursive: true, force: true });
});

/** A project and a home of its own; `marker` counts the helper's runs (a line each). */
async function world(name: string) {
  const project = join(root, name, "project");
  const home = join(root, name, "home");
  await mkdir(join(project, ".claude"), { recursive: true });
  await mkdir(join(home, ".claude"), { recursive: true });
  const marker = join(root, name, "runs");
  const helper = (key: string) => `echo ran >> '${marker}'; printf '%s\\n' '${key}'`;
  const runs = async () => (existsSync(marker) ? (await readFile(marker, "utf8")).split("\n").length - 1 : 0);
  // No key in the environment: only the endpoint (and what the test adds).
  const env = (extra: Record<string, string> = {}) => ({
    ANTHROPIC_BASE_URL: sim.url,
    HOME: home,
    FORKLOOP_HOME: home,
    ...extra,
  });
  const run = (args: readonly string[], extra?: Record<string, string>) =>
    runCliInProcess(["-p", "Say hello.", ...args], { cwd: project, env: env(extra) });
  return { project, home, marker, helper, runs, run };
}

/** The x-api-key (and a bearer `Authorization`, when one is sent) of the main-loop requests since `from`. */
async function keysSince(from: number): Promise<string[]> {
  return (await sim.requests())
    .slice(from)
    .filter((record) => record.querySource === "sdk")
    .map((record) =>
      [record.headers["x-api-key"] ?? "", record.headers.authorization ?? ""].filter(Boolean).join(" | "),
    );
}

describe("R-X2: apiKeyHelper", () => {
  it("R-X2: the user settings' apiKeyHelper runs once per process and its key authenticates every request (x-api-key); an environment key wins and the helper does not run", async () => {
    const w = await world("user");
    await writeFile(
      join(w.home, ".claude", "settings.json"),
      JSON.stringify({ apiKeyHelper: w.helper("helper-key-user") }),
    );
    const before = (await sim.requests()).length;
    for (let i = 0; i < 2; i++) {
      const result = await w.run([]);
      expect(result.code, result.stderr).toBe(0);
    }
    // As Claude Code sends a helper's key: in x-api-key and as a bearer token.
    expect(await keysSince(before)).toEqual([
      "helper-key-user | Bearer helper-key-user",
      "helper-key-user | Bearer helper-key-user",
    ]);
    expect(await w.runs()).toBe(1);
    // CLAUDE_CODE_API_KEY_HELPER_TTL_MS=0: the next session runs it again.
    expect((await w.run([], { CLAUDE_CODE_API_KEY_HELPER_TTL_MS: "0" })).code).toBe(0);
    expect(await w.runs()).toBe(2);
    // Control: with ANTHROPIC_API_KEY set, that key is sent and the helper is left alone.
    const keyed = (await sim.requests()).length;
    expect((await w.run([], { ANTHROPIC_API_KEY: "env-key" })).code).toBe(0);
    expect(await keysSince(keyed)).toEqual(["env-key"]);
    expect(await w.runs()).toBe(2);
  });

  it("R-X2: --settings may name the helper; a helper that fails stops the run before any request, exit 2, naming it and its stderr", async () => {
    const w = await world("flag");
    const before = (await sim.requests()).length;
    const ok = await w.run(["--settings", JSON.stringify({ apiKeyHelper: w.helper("helper-key-flag") })]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(await keysSince(before)).toEqual(["helper-key-flag | Bearer helper-key-flag"]);
    const failing = "echo 'vault is sealed' >&2; exit 3";
    const after = (await sim.requests()).length;
    const failed = await w.run(["--settings", JSON.stringify({ apiKeyHelper: failing })]);
    expect(failed.code).toBe(2);
    expect(failed.stderr).toContain(`apiKeyHelper "${failing}" failed (exit 3): vault is sealed`);
    const silent = await w.run(["--settings", JSON.stringify({ apiKeyHelper: "true" })]);
    expect(silent.code).toBe(2);
    expect(silent.stderr).toContain('apiKeyHelper "true" printed no key');
    expect((await sim.requests()).length).toBe(after);
  });

  it("R-X2, R-S5: an untrusted project's apiKeyHelper (shared or local file) never runs and is named as ignored; trusted (--trust-project), it runs", async () => {
    const w = await world("project");
    for (const file of ["settings.json", "settings.local.json"]) {
      await writeFile(
        join(w.project, ".claude", file),
        JSON.stringify({ apiKeyHelper: w.helper("helper-key-project") }),
      );
      const before = (await sim.requests()).length;
      const untrusted = await w.run([]);
      expect(untrusted.code).toBe(2);
      expect(untrusted.stderr).toContain(`${join(w.project, ".claude", file)}: ignored apiKeyHelper`);
      expect(untrusted.stderr).toContain("neither ANTHROPIC_API_KEY nor ANTHROPIC_AUTH_TOKEN");
      expect(await w.runs()).toBe(0);
      expect((await sim.requests()).length).toBe(before);
      await rm(join(w.project, ".claude", file));
    }
    await writeFile(
      join(w.project, ".claude", "settings.json"),
      JSON.stringify({ apiKeyHelper: w.helper("helper-key-trusted") }),
    );
    const before = (await sim.requests()).length;
    const trusted = await w.run(["--trust-project"]);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(await keysSince(before)).toEqual(["helper-key-trusted | Bearer helper-key-trusted"]);
    expect(await w.runs()).toBe(1);
  });
});
