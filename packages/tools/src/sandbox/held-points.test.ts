import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readProjectFile } from "../project-files/read-project-file.js";
import { useTempWorkspace } from "../testing/index.js";
import { heldPoints, recordHeldPoints } from "./held-points.js";

const ws = useTempWorkspace();

/** A pid that ran and is gone. */
function deadPid(): number {
  const run = spawnSync("sh", ["-c", "echo $$"], { encoding: "utf8" });
  return Number(run.stdout.trim());
}

describe("R-S9: the records of what running sandboxed commands may still create", () => {
  it("R-S9: a record holds its files (and what lies below a held directory) until released; the directory is 0700, the record 0600", () => {
    const userDir = join(ws.root, "user");
    const project = join(ws.root, "project");
    mkdirSync(project);
    const release = recordHeldPoints(userDir, [
      { path: join(project, ".mcp.json"), what: "the project's MCP servers" },
      { path: join(project, ".claude"), what: "Claude Code's project settings" },
    ]);
    const held = heldPoints([userDir]);
    expect(held.find(join(project, ".mcp.json"))).toMatchObject({ pid: process.pid });
    expect(held.find(join(project, ".claude", "settings.json"))?.path).toBe(join(project, ".claude"));
    expect(held.find(join(project, "README.md"))).toBeUndefined();
    expect(statSync(join(userDir, "watched")).mode & 0o777).toBe(0o700);
    const [record] = readdirSync(join(userDir, "watched"));
    expect(statSync(join(userDir, "watched", record ?? "")).mode & 0o777).toBe(0o600);
    release();
    expect(readdirSync(join(userDir, "watched"))).toEqual([]);
    expect(heldPoints([userDir]).find(join(project, ".mcp.json"))).toBeUndefined();
  });

  it("R-S9: a name reached through a symlinked directory is found by its real parent", () => {
    const userDir = join(ws.root, "user");
    const real = join(ws.root, "real");
    mkdirSync(real);
    symlinkSync(real, join(ws.root, "linked"));
    const release = recordHeldPoints(userDir, [{ path: join(real, ".mcp.json"), what: "MCP" }]);
    expect(heldPoints([userDir]).find(join(ws.root, "linked", ".mcp.json"))?.path).toBe(
      join(real, ".mcp.json"),
    );
    release();
  });

  it("R-S9: a record of a process that is gone, or of an earlier process with the same pid, is ignored and removed", () => {
    const userDir = join(ws.root, "user");
    const watched = join(userDir, "watched");
    mkdirSync(watched, { recursive: true });
    const points = [{ path: join(ws.root, ".mcp.json"), what: "MCP" }];
    writeFileSync(join(watched, "dead.json"), JSON.stringify({ pid: deadPid(), start: "1", points }));
    // This process's pid, but another start time: the pid was reused.
    writeFileSync(join(watched, "reused.json"), JSON.stringify({ pid: process.pid, start: "1", points }));
    writeFileSync(join(watched, "garbage.json"), "{not json");
    expect(heldPoints([userDir]).find(join(ws.root, ".mcp.json"))).toBeUndefined();
    expect(existsSync(join(watched, "dead.json"))).toBe(false);
    expect(existsSync(join(watched, "reused.json"))).toBe(false);
  });

  it("R-S9: readProjectFile refuses a held file, present or not, naming the command's process and the fix", () => {
    const userDir = join(ws.root, "user");
    const file = join(ws.root, ".mcp.json");
    writeFileSync(file, '{"mcpServers":{}}');
    const release = recordHeldPoints(userDir, [{ path: file, what: "the project's MCP servers" }]);
    const read = readProjectFile(file, {
      roots: [ws.root],
      maxBytes: 1024,
      what: "MCP config",
      held: heldPoints([userDir]),
    });
    expect(read.status).toBe("refused");
    if (read.status !== "refused") return;
    expect(read.heldBy?.pid).toBe(process.pid);
    expect(read.message).toContain(`forkloop process ${process.pid}`);
    expect(read.message).toContain("once that command has ended");
    release();
    // Control: released, the same file reads.
    expect(
      readProjectFile(file, {
        roots: [ws.root],
        maxBytes: 1024,
        what: "MCP config",
        held: heldPoints([userDir]),
      }).status,
    ).toBe("read");
  });
});
