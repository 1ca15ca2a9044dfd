import { mkdir, mkdtemp, readdir, rm, symlink, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  runCliInProcess,
  type SimHandle,
  startCli,
  startSimInProcess,
  waitForOutput,
} from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * R-R9: bad input and a wrong endpoint, key or model stop a batch before it spends
 * (or after the first item), through the CLI (in this process; the built binary where SIGTERM
 * stops it). Each test counts the requests the simulator received.
 */
let dir: string;
let sim: SimHandle;
let denying: SimHandle;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-fail-fast-"));
  await mkdir(join(dir, "src"));
  for (let index = 0; index < 4; index++)
    await writeFile(join(dir, "src", `f${index}.ts`), `export const f${index} = ${index};\n`);
  [sim, denying] = await Promise.all([
    startSimInProcess(dir),
    startSimInProcess(dir, ["--faults", "401@1+"]),
  ]);
});
afterAll(async () => {
  await Promise.all([sim?.stop(), denying?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

const messageRequests = async (server: SimHandle) =>
  (await server.requests()).filter((record) => record.path.startsWith("/v1/messages")).length;

const batch = (args: string[], env: Record<string, string> = sim.env, cwd = dir) =>
  runCliInProcess(["batch", "--prompt", "Summarize {{file}}", ...args], { cwd, env });

describe("fail fast, before spending", () => {
  it("--cwd must exist (batch and run): exit 2 naming it, and nothing is created there", async () => {
    const missing = join(dir, "no-such-project");
    const result = await batch(["--files", "*.ts", "--cwd", missing]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--cwd ${missing}: no such directory`);
    const run = await runCliInProcess(["run", "hi", "--cwd", missing], { cwd: dir, env: sim.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`--cwd ${missing}: no such directory`);
    expect(await readdir(dir)).not.toContain("no-such-project");
  });

  it("an unwritable --output is exit 2 before the first request", async () => {
    const before = await messageRequests(sim);
    await writeFile(join(dir, "a-file"), "not a directory\n");
    const result = await batch(["--files", "src/*.ts", "--output", "a-file/report"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /cannot write the output directory .*a-file\/report: .+give a writable --output DIR/,
    );
    expect(await messageRequests(sim)).toBe(before);
  });

  it("a {{item.key}} missing from one item is exit 2 naming the item and the key, before any request", async () => {
    const before = await messageRequests(sim);
    await writeFile(join(dir, "tasks.jsonl"), '{"path":"a"}\n{"path":"b"}\n{"name":"c"}\n');
    const result = runCliInProcess(["batch", "--items", "tasks.jsonl", "--prompt", "Review {{item.path}}"], {
      cwd: dir,
      env: sim.env,
    });
    const { code, stderr } = await result;
    expect(code).toBe(2);
    expect(stderr).toContain(`but ${join(dir, "tasks.jsonl")}:3 has no "path"`);
    expect(await messageRequests(sim)).toBe(before);
  });

  it("R-R9: the first item's 401 stops the whole batch at once, naming the URL and the fix; no item is failed", async () => {
    const result = await batch(["--files", "src/*.ts", "--concurrency", "2", "--id", "denied"], denying.env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `forkloop batch denied: stopped: ${denying.url} refused the API key (401: `,
    );
    expect(result.stderr).toContain(
      "Set ANTHROPIC_API_KEY to a valid key; 4 items left pending — fix it, then `forkloop batch --resume denied` finishes them.",
    );
    // The warmed first item alone reached the server; it and the three others wait for the resume.
    expect(await messageRequests(denying)).toBe(1);
    expect(result.stdout).toContain("4 items: 0 succeeded, 0 failed, 4 not finished");
  });

  it("R-R9: the first item's 404 for an unknown model stops the batch, naming the model and the resume that replaces it", async () => {
    const before = await messageRequests(sim);
    const result = await batch(["--files", "src/*.ts", "--model", "claude-nope-9", "--id", "nope"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`model "claude-nope-9" was not found at ${sim.url} (404: `);
    expect(result.stderr).toContain("then `forkloop batch --resume nope --model NAME` finishes them.");
    expect((await messageRequests(sim)) - before).toBe(1);
  });

  it("R-R9: run with an unknown model is bad input as in batch: exit 2, one line naming the model and the resume that replaces it", async () => {
    const before = await messageRequests(sim);
    const result = await runCliInProcess(["run", "hi", "--model", "claude-nope-9"], {
      cwd: dir,
      env: sim.env,
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(
      new RegExp(
        `^API Error: model "claude-nope-9" was not found at ${sim.url.replace(/[.]/g, "\\.")} \\(404: .+\\)\\. Give a model the endpoint serves; then continue the session with \`forkloop run --resume [0-9a-f-]{36} "…" --model NAME\`\\.$`,
        "m",
      ),
    );
    expect((await messageRequests(sim)) - before).toBe(1);
  });

  it("binary and unreadable matches are skipped at enqueue and listed", async () => {
    const project = join(dir, "mixed");
    await mkdir(project);
    await writeFile(join(project, "a.txt"), "plain text\n");
    await writeFile(join(project, "logo.txt"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x1a]));
    // Unreadable even for root: reading /proc/self/mem at offset 0 is EIO.
    await symlink("/proc/self/mem", join(project, "mem.txt"));
    const result = await batch(["--files", "*.txt"], sim.env, project);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain("skipped 1 binary file (logo.txt) and 1 unreadable file (mem.txt: EIO)");
    expect(result.stdout).toContain("1 item: 1 succeeded, 0 failed");
  });

  it("a closed port: the connection retries show on the progress line, naming the URL (not minutes of silence)", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const url = `http://127.0.0.1:${closed}`;
    const run = startCli(["batch", "--files", "src/*.ts", "--prompt", "Summarize {{file}}"], {
      cwd: dir,
      env: { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: url },
    });
    await waitForOutput(run.child, run.stderr, (text) => text.includes("retrying"));
    expect(run.stderr()).toMatch(
      new RegExp(`retrying src/f0\\.ts \\(attempt 1/\\d+ in [^)]+\\): .+ — ${url}`),
    );
    run.child.kill("SIGTERM");
    expect((await run.exited).code).toBe(143);
  });

  it("a closed port, retries spent: the first item's connection error stops the batch, naming the URL and the fix", async () => {
    const closed = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const url = `http://127.0.0.1:${closed}`;
    const result = await batch(["--files", "src/*.ts", "--concurrency", "2", "--id", "unreachable"], {
      ANTHROPIC_API_KEY: "test-key",
      ANTHROPIC_BASE_URL: url,
      FORKLOOP_MAX_RETRIES: "0",
    });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toContain(
      `forkloop batch unreachable: stopped: cannot reach the model endpoint ${url} (`,
    );
    expect(result.stderr).toContain("then `forkloop batch --resume unreachable` finishes them.");
    // The first item alone was tried; it and the others wait for the resume.
    expect(result.stdout).toContain("4 items: 0 succeeded, 0 failed, 4 not finished");
  });
});
