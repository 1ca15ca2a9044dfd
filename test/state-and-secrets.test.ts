import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { TEST_SERVER_PATH } from "@forkloop/mcp/testing";
import { type Simulator, startSimulator } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runTrustSession } from "./support/trust-session.js";

// R-S13: secrets and files — what forkloop writes is the user's alone, and MCP servers start
// without the model's credentials.

let sim: Simulator;
let root: string;

beforeAll(async () => {
  sim = await startSimulator();
  root = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-state-secrets-")));
});
afterAll(async () => {
  await sim.close();
  rmSync(root, { recursive: true, force: true });
});

/** Every entry under `dir` with its permission bits, symlinks not followed. */
function walk(dir: string): { path: string; kind: "dir" | "file"; mode: number }[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stats = lstatSync(path);
    const entry = {
      path,
      kind: stats.isDirectory() ? ("dir" as const) : ("file" as const),
      mode: stats.mode & 0o777,
    };
    return stats.isDirectory() ? [entry, ...walk(path)] : [entry];
  });
}

describe("R-S13: state files are 0600, state directories 0700", () => {
  it("R-S13: after a `run` session and a `batch` (the CLI's commands), nothing in the state directory is readable by others", async () => {
    const project = join(root, "project");
    mkdirSync(project);
    writeFileSync(join(project, "notes.md"), "# Notes\nThe state of things.\n");
    writeFileSync(join(project, "b.md"), "# B\n");
    const env = { ANTHROPIC_API_KEY: "test-key", ANTHROPIC_BASE_URL: sim.url };
    const run = await runCliInProcess(["run", "Summarize notes.md"], { cwd: project, env });
    expect(run.code, run.stderr).toBe(0);
    const batch = await runCliInProcess(["batch", "--files", "*.md", "--prompt", "Summarize {{file}}"], {
      cwd: project,
      env,
    });
    expect(batch.code, batch.stderr).toBe(0);
    // cliEnv makes HOME the project: the state lives in <project>/.forkloop/projects/<key>/.
    const state = join(project, ".forkloop");
    const entries = walk(state);
    expect(entries.some((entry) => entry.path.endsWith(".fltr"))).toBe(true);
    expect(entries.some((entry) => entry.path.includes("batches"))).toBe(true);
    const loose = entries.filter((entry) =>
      entry.kind === "dir" ? entry.mode !== 0o700 : (entry.mode & 0o077) !== 0,
    );
    expect(loose.map((entry) => `${entry.path} ${entry.mode.toString(8)}`)).toEqual([]);
  });
});

describe("R-S13: MCP servers get the environment Bash gets", () => {
  it("R-S13: a stdio server starts without the model credentials unless its config's env names one", async () => {
    const project = join(root, "mcp-project");
    const home = join(root, "mcp-home");
    mkdirSync(project);
    mkdirSync(home);
    /** A stdio server that writes its environment to `file`, then serves MCP. */
    const server = (file: string, env?: Record<string, string>) => ({
      command: "sh",
      args: ["-c", `env > '${file}'; exec '${process.execPath}' '${TEST_SERVER_PATH}'`],
      ...(env === undefined ? {} : { env }),
    });
    const plain = join(root, "plain.env");
    const named = join(root, "named.env");
    const key = "sk-ant-mcp-secret-0099";
    const seen = await runTrustSession(sim, {
      cwd: project,
      home,
      stateDir: join(root, "mcp-state"),
      extra: {
        env: {
          ANTHROPIC_API_KEY: key,
          ANTHROPIC_AUTH_TOKEN: "auth-token-0099",
          ANTHROPIC_BASE_URL: sim.url,
          HOME: home,
        },
        mcpServers: {
          plain: server(plain),
          named: server(named, { ANTHROPIC_API_KEY: key }),
        },
      },
    });
    expect(seen.error).toBeUndefined();
    expect(seen.bodies[0]).toContain("mcp__plain__echo");
    const plainEnv = readFileSync(plain, "utf8");
    expect(plainEnv).not.toContain(key);
    expect(plainEnv).not.toContain("auth-token-0099");
    expect(plainEnv).toContain("ANTHROPIC_BASE_URL="); // not a credential: kept, as Bash keeps it
    expect(readFileSync(named, "utf8")).toContain(`ANTHROPIC_API_KEY=${key}`);
  });
});
