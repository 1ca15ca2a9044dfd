import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
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

  it("R-X3, R-X2: --bare takes the apiKeyHelper of --settings only: the user settings' helper does not run (no key, exit 2, no request), --settings' does", async () => {
    const w = await world("bare");
    await writeFile(
      join(w.home, ".claude", "settings.json"),
      JSON.stringify({ apiKeyHelper: w.helper("helper-key-user-bare") }),
    );
    const before = (await sim.requests()).length;
    const unkeyed = await w.run(["--bare"]);
    expect(unkeyed.code).toBe(2);
    expect(await w.runs()).toBe(0);
    expect((await sim.requests()).length).toBe(before);
    const flagged = await w.run([
      "--bare",
      "--settings",
      JSON.stringify({ apiKeyHelper: w.helper("helper-key-bare") }),
    ]);
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(await keysSince(before)).toEqual(["helper-key-bare | Bearer helper-key-bare"]);
    expect(await w.runs()).toBe(1);
    // Control: without --bare the user settings' helper runs.
    expect((await w.run([])).code).toBe(0);
    expect(await w.runs()).toBe(2);
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

  it("R-X2: a request the API answers 401 runs the helper again and is sent once more with its new key; later sessions keep the new key", async () => {
    const w = await world("refresh");
    // The helper prints key-1, then key-2, … (one a run); the gateway refuses key-1 as revoked.
    const counter = join(root, "refresh", "n");
    const rotating = `n=$(cat '${counter}' 2>/dev/null || echo 0); n=$((n+1)); echo $n > '${counter}'; echo ran >> '${w.marker}'; echo key-$n`;
    await writeFile(join(w.home, ".claude", "settings.json"), JSON.stringify({ apiKeyHelper: rotating }));
    const gateway = await revokingGateway(sim.url, "key-1");
    try {
      const first = await w.run([], { ANTHROPIC_BASE_URL: gateway.url });
      expect(first.code, first.stderr).toBe(0);
      expect(gateway.seen).toEqual(["key-1 401", "key-2 200"]);
      expect(await w.runs()).toBe(2);
      // The next session in this process sends the refreshed key without running the helper.
      expect((await w.run([], { ANTHROPIC_BASE_URL: gateway.url })).code).toBe(0);
      expect(gateway.seen.slice(2)).toEqual(["key-2 200"]);
      expect(await w.runs()).toBe(2);
    } finally {
      await gateway.close();
    }
  });

  it("R-X2: a helper that hangs is stopped after FORKLOOP_API_KEY_HELPER_TIMEOUT_MS: exit 2 naming it and the limit, no request", async () => {
    const w = await world("hung");
    const hung = "sleep 30; echo late-key";
    await writeFile(join(w.home, ".claude", "settings.json"), JSON.stringify({ apiKeyHelper: hung }));
    const before = (await sim.requests()).length;
    const result = await w.run([], { FORKLOOP_API_KEY_HELPER_TIMEOUT_MS: "300" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `apiKeyHelper "${hung}" did not print a key within 300 ms and was stopped`,
    );
    expect((await sim.requests()).length).toBe(before);
  });

  it("R-X2: stream-json's init line says apiKeySource \"apiKeyHelper\" for a helper's key, as Claude Code does", async () => {
    const w = await world("init");
    await writeFile(
      join(w.home, ".claude", "settings.json"),
      JSON.stringify({ apiKeyHelper: w.helper("k-init") }),
    );
    const result = await w.run(["--output-format", "stream-json", "--verbose"]);
    expect(result.code, result.stderr).toBe(0);
    const init = result.stdout
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { subtype?: string; apiKeySource?: string })
      .find((line) => line.subtype === "init");
    expect(init?.apiKeySource).toBe("apiKeyHelper");
    // Control: an environment key is ANTHROPIC_API_KEY.
    const keyed = await w.run(["--output-format", "stream-json", "--verbose"], {
      ANTHROPIC_API_KEY: "env-key",
    });
    expect(keyed.stdout).toContain('"apiKeySource":"ANTHROPIC_API_KEY"');
  });

  it('R-X2: with only ANTHROPIC_AUTH_TOKEN (a gateway\'s bearer token) the init line says apiKeySource "none", as Claude Code does', async () => {
    const w = await world("bearer");
    const result = await w.run(["--output-format", "stream-json", "--verbose"], {
      ANTHROPIC_AUTH_TOKEN: "gateway-token",
    });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('"apiKeySource":"none"');
  });
});

/**
 * A gateway in front of the simulator (real HTTP) that answers 401 authentication_error to a
 * revoked key and passes every other request on; `seen` is each request's key and status.
 */
async function revokingGateway(target: string, revoked: string) {
  const seen: string[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const key = String(req.headers["x-api-key"] ?? "");
    if (key === revoked) {
      seen.push(`${key} 401`);
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          type: "error",
          error: { type: "authentication_error", message: "invalid x-api-key" },
        }),
      );
      return;
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (typeof value === "string" && name !== "host" && name !== "content-length") headers[name] = value;
    }
    const answer = await fetch(`${target}${req.url ?? ""}`, {
      method: req.method ?? "GET",
      headers,
      ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
    });
    if (req.url?.startsWith("/v1/messages") === true && req.method === "POST")
      seen.push(`${key} ${answer.status}`);
    const out: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (name !== "content-length" && name !== "content-encoding" && name !== "transfer-encoding")
        out[name] = value;
    });
    res.writeHead(answer.status, out);
    res.end(Buffer.from(await answer.arrayBuffer()));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
