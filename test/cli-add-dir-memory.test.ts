import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { runCliInProcess } from "@forkloop/cli/testing";
import { describe, expect, it } from "vitest";
import { useSimProject } from "./support/cli-sim-project.js";

// R-X3, R-S8: an --add-dir directory's CLAUDE.md, as Claude Code reads it — only under
// CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1, also under --restricted (which reads no project
// CLAUDE.md), never under --bare — against the simulator over HTTP.
const project = useSimProject("add-dir-memory", async (dir, home) => {
  await writeFile(join(dir, "CLAUDE.md"), "The project codename is GREY-OWL-3.\n");
  await mkdir(join(home, "extra"));
  await writeFile(join(home, "extra", "CLAUDE.md"), "The codename is ADD-DIR-9.\n");
});

/** One run's main request's system text. */
async function systemOf(args: readonly string[], env: Record<string, string> = {}) {
  const from = (await project.sim.requests()).length;
  const result = await runCliInProcess(
    ["-p", "What is the codename?", "--add-dir", join(project.home, "extra"), ...args],
    { cwd: project.dir, env: { ...project.env(), ...env } },
  );
  expect(result.code, result.stderr).toBe(0);
  const main = (await project.sim.requests()).slice(from).find((record) => record.querySource === "sdk");
  return JSON.stringify(JSON.parse(main?.rawBody ?? "{}").system);
}

const ON = { CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD: "1" };

describe("R-X3: --add-dir's CLAUDE.md", () => {
  it("R-X3: read under CLAUDE_CODE_ADDITIONAL_DIRECTORIES_CLAUDE_MD=1 (and --restricted), not without it nor under --bare", async () => {
    const off = await systemOf([]);
    expect(off).toContain("GREY-OWL-3");
    expect(off).not.toContain("ADD-DIR-9");
    const on = await systemOf([], ON);
    expect(on).toContain("GREY-OWL-3");
    expect(on).toContain("ADD-DIR-9");
    const restricted = await systemOf(["--restricted"], ON);
    expect(restricted).not.toContain("GREY-OWL-3");
    expect(restricted).toContain("ADD-DIR-9");
    const bare = await systemOf(["--bare"], ON);
    expect(bare).not.toContain("ADD-DIR-9");
  });
});
