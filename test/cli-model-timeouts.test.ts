import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, streamJsonLines } from "@forkloop/cli/testing";
import { type ScheduledFault, type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";

let dir: string;
let server: Simulator | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-timeouts-"));
});
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The simulator with these faults scheduled (none: it answers). */
async function hostile(...schedule: ScheduledFault[]): Promise<Record<string, string>> {
  server = await startSimulator({ faults: { schedule } });
  return { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: server.url };
}

describe("R-R2: model deadlines through the built CLI (flags, env, settings)", () => {
  it("--idle-timeout: a stream that goes silent after its headers is retried (api_retry), the run succeeds", async () => {
    const env = await hostile({ kind: "headers_then_silence", from: 1, to: 1 });
    const result = await runCliInProcess(
      ["run", "hi", "--output-format", "stream-json", "--idle-timeout", "0.3"],
      {
        cwd: dir,
        env,
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const lines = streamJsonLines(result.stdout);
    expect(lines.find((line) => line.type === "system" && line.subtype === "api_retry")).toMatchObject({
      error_message: "the stream sent no event (pings aside) for 300 ms",
    });
    expect(lines.at(-1)).toMatchObject({ type: "result", subtype: "success" });
  });

  it("settings env: FORKLOOP_STREAM_IDLE_TIMEOUT_MS and FORKLOOP_MAX_RETRIES bound a ping-only server", async () => {
    const project = join(dir, "with-settings");
    await mkdir(join(project, ".forkloop"), { recursive: true });
    await writeFile(
      join(project, ".forkloop", "settings.json"),
      JSON.stringify({ env: { FORKLOOP_STREAM_IDLE_TIMEOUT_MS: "200", FORKLOOP_MAX_RETRIES: "1" } }),
    );
    const env = await hostile({ kind: "ping_only", from: 1, to: Number.POSITIVE_INFINITY, slowMs: 20 });
    const result = await runCliInProcess(["run", "hi", "--output-format", "stream-json"], {
      cwd: project,
      env,
    });
    expect(result.code).toBe(4);
    const last = streamJsonLines(result.stdout).at(-1);
    expect(last).toMatchObject({ type: "result", is_error: true, terminal_reason: "api_error" });
    expect(server?.requests()).toHaveLength(2);
  });

  it("R-X1: Claude Code's CLAUDE_CODE_MAX_RETRIES bounds the retries when FORKLOOP_MAX_RETRIES is not set; forkloop's own wins", async () => {
    const always500 = { kind: "500", from: 1, to: Number.POSITIVE_INFINITY } as const;
    const args = ["run", "hi", "--output-format", "stream-json"];
    let env = await hostile(always500);
    const claudes = await runCliInProcess(args, { cwd: dir, env: { ...env, CLAUDE_CODE_MAX_RETRIES: "1" } });
    expect(claudes.code).toBe(4);
    expect(server?.requests()).toHaveLength(2);
    await server?.close();
    env = await hostile(always500);
    const both = await runCliInProcess(args, {
      cwd: dir,
      env: { ...env, CLAUDE_CODE_MAX_RETRIES: "3", FORKLOOP_MAX_RETRIES: "0" },
    });
    expect(both.code).toBe(4);
    expect(server?.requests()).toHaveLength(1);
  });

  it("a bad value names the variable and the fix (exit 2, before any request)", async () => {
    const env = await hostile();
    const result = await runCliInProcess(["run", "hi"], {
      cwd: dir,
      env: { ...env, FORKLOOP_HEADERS_TIMEOUT_MS: "soon" },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /environment variable FORKLOOP_HEADERS_TIMEOUT_MS is "soon".*Fix or unset it/,
    );
    const flag = await runCliInProcess(["run", "hi", "--idle-timeout", "-3"], { cwd: dir, env });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toMatch(/--idle-timeout/);
    expect(server?.requests()).toHaveLength(0);
  });
});
