/**
 * R-S11 through the CLI: state found in a checkout (`<cwd>/.forkloop/`) is used only when
 * the user's own forkloop directory records that forkloop made it there. A batch or a session a
 * repository ships — a copy of a real one — is refused with the reason and the way to use it if it
 * is the user's, and `run -c` does not continue it. A recorded batch in the checkout is still never
 * resumed with a stored bypassPermissions. Controls: the user's own batch in the checkout resumes
 * as stored; test/cli-state-dir.test.ts resumes the user's own session there.
 */
import { execFile } from "node:child_process";
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { type BatchSpec, createBatch } from "@forkloop/batch";
import { runCliInProcess } from "@forkloop/cli/testing";
import { DEFAULT_MODEL, projectState, query } from "@forkloop/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const git = promisify(execFile);
let root: string;
let project: string;
let home: string;
let attacker: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "forkloop-checkout-state-"));
  project = join(root, "checkout");
  home = join(root, "home");
  attacker = join(root, "attacker");
  await mkdir(project, { recursive: true });
  await mkdir(home);
  await writeFile(join(project, "a.txt"), "alpha\n");
  await git("git", ["init", "-q"], { cwd: project });
});
afterAll(() => rm(root, { recursive: true, force: true }));

const cli = (args: string[]) => runCliInProcess(args, { cwd: project, env: { HOME: home } });

function spec(id: string, extra: Partial<BatchSpec> = {}): BatchSpec {
  return {
    id,
    createdAt: new Date().toISOString(),
    cwd: project,
    source: { kind: "files", pattern: "a.txt" },
    prompt: "Summarize {{file}}",
    model: DEFAULT_MODEL,
    maxTurns: 2,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "dontAsk",
    fallbackModels: [],
    outputDir: join(project, ".forkloop", "batches", id),
    ...extra,
  };
}

/** A batch made by forkloop for someone else, copied into the checkout as a repository would ship it. */
async function shipBatch(batch: BatchSpec): Promise<string> {
  const made = await createBatch(
    projectState({ cwd: project, env: { HOME: attacker }, stateDir: attacker }),
    batch,
  );
  const target = join(project, ".forkloop", "batches", batch.id);
  await cp(made, target, { recursive: true });
  return target;
}

describe("R-S11: state shipped in a checkout is not the user's", () => {
  it("R-S11: a shipped batch with bypassPermissions and a working directory outside is not resumed (exit 2, reason and fix); nothing in it changes", async () => {
    const shipped = await shipBatch(spec("shipped", { permissionMode: "bypassPermissions", cwd: "/" }));
    const before = await readdir(shipped);
    const resumed = await cli(["batch", "--resume", "shipped"]);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toMatch(
      /batch shipped at .*\.forkloop\/batches\/shipped is inside the checkout and forkloop has no record of making it there .*own-state\.jsonl.*a repository can ship one\. If it is yours .*mv /,
    );
    expect(await readdir(shipped)).toEqual(before);
  }, 120_000);

  it("R-S11: a shipped session is not resumed by id, and `run -c` does not continue it", async () => {
    let shippedId = "";
    // A real transcript, made in this process on the embedded simulator for someone else.
    for await (const message of query({
      prompt: "hi",
      options: { cwd: project, stateDir: attacker, env: { HOME: attacker }, stderr: () => {} },
    })) {
      if (message.type === "result") shippedId = message.session_id;
    }
    await mkdir(join(project, ".forkloop", "sessions"), { recursive: true });
    await cp(
      join(attacker, "sessions", `${shippedId}.fltr`),
      join(project, ".forkloop", "sessions", `${shippedId}.fltr`),
    );
    const byId = await cli(["run", "--resume", shippedId, "go on"]);
    expect(byId.code).toBe(2);
    expect(byId.stderr).toMatch(
      /session ".*" at .*\.forkloop\/sessions\/.*\.fltr is inside the checkout and forkloop has no record/,
    );
    // -c does not continue the shipped session: with no session of the user's, it starts a new one.
    const continued = await cli(["run", "-c", "go on", "--output-format", "json"]);
    expect(continued.code, continued.stderr).toBe(0);
    expect(JSON.parse(continued.stdout).session_id).not.toBe(shippedId);
    expect(continued.stderr).toMatch(/--continue: no session to continue in .*; starting a new one/);
  }, 120_000);

  it("R-S11: the user's own batch in the checkout resumes as stored (control), but never with a stored bypassPermissions", async () => {
    // Made as the user's forkloop makes it (with --state-dir in the checkout): recorded in ~/.forkloop.
    const state = projectState({ cwd: project, env: { HOME: home }, stateDir: join(project, ".forkloop") });
    const dir = await createBatch(state, spec("mine"));
    const resumed = await cli(["batch", "--resume", "mine"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const stored = JSON.parse(await readFile(join(dir, "batch.json"), "utf8")) as BatchSpec;
    await writeFile(
      join(dir, "batch.json"),
      JSON.stringify({ ...stored, permissionMode: "bypassPermissions" }),
    );
    const widened = await cli(["batch", "--resume", "mine"]);
    expect(widened.code).toBe(2);
    expect(widened.stderr).toMatch(
      /is inside the checkout and its stored permission mode is bypassPermissions; state found in a checkout is never resumed with that/,
    );
  }, 120_000);

  it("R-S11 with R-R7: the user's own batch in the checkout is not resumed with a stored --trust-project or --sandbox off; given again, they are used", async () => {
    // Untrusted, the project's permissions.allow is ignored and said so; trusted, it is used.
    await mkdir(join(project, ".claude"), { recursive: true });
    await writeFile(
      join(project, ".claude", "settings.json"),
      JSON.stringify({ permissions: { allow: ["Read"] } }),
    );
    const state = projectState({ cwd: project, env: { HOME: home }, stateDir: join(project, ".forkloop") });
    const dir = await createBatch(state, {
      ...spec("planted"),
      startFlags: { "trust-project": true, sandbox: "off", "max-turns": "2" },
    });
    const resumed = await cli(["batch", "--resume", "planted"]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(
      "forkloop batch planted: its state is inside the checkout, so it is not resumed with its stored --trust-project, --sandbox off (a repository can rewrite it); give them again with --resume to use them",
    );
    expect(resumed.stderr).toContain("permissions.allow (Read)");
    // batch.json keeps what it held: nothing is rewritten by not using it.
    expect(JSON.parse(await readFile(join(dir, "batch.json"), "utf8")).startFlags).toEqual({
      "trust-project": true,
      sandbox: "off",
      "max-turns": "2",
    });
    const trusted = await cli(["batch", "--resume", "planted", "--trust-project"]);
    expect(trusted.code, trusted.stderr).toBe(0);
    expect(trusted.stderr).toContain("not resumed with its stored --sandbox off");
    expect(trusted.stderr).not.toContain("permissions.allow (Read)");
  }, 120_000);
});
