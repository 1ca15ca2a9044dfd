import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess, startSimInProcess, withSim, writeScenario } from "@forkloop/cli/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Through the CLI: the simulator's built-in policy (what `npm start`'s demo
 * runs on) fans a glob out into one sub-agent per file, the forks read the parent's prefix from
 * the cache, and a rename prompt edits the file on disk.
 */
let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "forkloop-cli-fan-out-"));
  await mkdir(join(dir, "src"));
  for (const name of ["alpha", "beta", "gamma"]) {
    await writeFile(join(dir, "src", `${name}.ts`), `// The ${name} module.\nexport const ${name} = 1;\n`);
  }
  await writeFile(join(dir, "notes.ts"), "export function oldName() {}\noldName();\n");
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the demo's fan-out and edits, through the CLI", () => {
  it("R-K3: a glob prompt: Glob, then one general-purpose Agent per file in one turn; the fan-out reads one warmed prefix; the parent summarises", async () => {
    const sim = await startSimInProcess(dir);
    try {
      const result = await runCliInProcess(["run", "Summarize src/*.ts", "--output-format", "json"], {
        cwd: dir,
        env: sim.env,
      });
      expect(result.code, result.stderr).toBe(0);
      const answer = JSON.parse(result.stdout) as {
        result: string;
        subagentUsage: { cacheReadInputTokens: number }[];
      };
      expect(answer.result).toContain("3 sub-agents finished:");
      for (const name of ["alpha", "beta", "gamma"]) expect(answer.result).toContain(`Summarize ${name}.ts`);
      expect(answer.subagentUsage).toHaveLength(3);
      // Each sub-agent reads from the cache over its run (the type's prefix, then its own history).
      for (const agent of answer.subagentUsage) expect(agent.cacheReadInputTokens).toBeGreaterThan(0);

      const requests = (await sim.requests()).filter((r) => r.path === "/v1/messages");
      const parent = requests.filter((r) => r.querySource === "sdk");
      const forks = requests.filter((r) => r.querySource?.startsWith("agent:"));
      expect(parent).toHaveLength(3); // Glob, the fan-out, the summary
      const fanOut = JSON.parse(parent[2]?.rawBody ?? "{}") as { messages: { content: unknown }[] };
      const calls = JSON.stringify(fanOut.messages.at(-2)?.content).match(/"name":"Agent"/g) ?? [];
      expect(calls).toHaveLength(3);
      expect(forks).toHaveLength(6); // each sub-agent: Read, then its summary
      // general-purpose (the policy names no type) is a conversation of its own, warmed once per
      // type: the first request of the wave writes the type's prefix (system + tools), the other
      // two read it from the cache (R-K3, R-F4).
      const firstOfEach = forks.filter((r) => !r.rawBody.includes('"name":"Read","input"'));
      expect(firstOfEach).toHaveLength(3);
      const firstReads = firstOfEach.map((r) => r.usage?.cache_read_input_tokens ?? 0).sort((x, y) => x - y);
      expect(firstReads[0]).toBe(0);
      expect(firstReads[1]).toBeGreaterThan(0);
      expect(firstReads[2]).toBe(firstReads[1]);
    } finally {
      await sim.stop();
    }
  });

  it("R-F4: three Agent calls of one turn on another model (an agent definition's) are warmed like a batch's first wave — one fork alone, the others once its response has started, reading what it wrote", async () => {
    const project = join(dir, "reviewers");
    await mkdir(join(project, ".forkloop", "agents"), { recursive: true });
    await writeFile(
      join(project, ".forkloop", "agents", "reviewer.md"),
      "---\nname: reviewer\ndescription: Reviews one file.\nmodel: claude-sonnet-5\n---\nReview the file you are given and report in one line.\n",
    );
    const review = (name: string) => ({
      type: "tool_use",
      name: "Agent",
      input: { description: `Review ${name}`, prompt: `Review src/${name}.ts`, subagent_type: "reviewer" },
    });
    const scenario = await writeScenario(
      join(project, "reviewers.json"),
      [
        {
          match: { querySource: "sdk", lastToolResult: "[Subagent hand-back]" },
          reply: { content: [{ type: "text", text: "All three reviewed." }] },
        },
        { match: { querySource: "sdk" }, reply: { content: ["alpha", "beta", "gamma"].map(review) } },
        {
          match: { querySource: "agent:reviewer" },
          reply: { content: [{ type: "text", text: "Looks fine." }] },
        },
      ],
      "(unscripted)",
    );
    // Realistic latency: a fork sent before the first one's response starts would miss its write.
    await withSim(project, ["--scenario", scenario, "--latency", "realistic"], async (sim) => {
      const result = await runCliInProcess(["run", "Review the three modules."], {
        cwd: project,
        env: sim.env,
      });
      expect(result.code, result.stderr).toBe(0);
      const forks = (await sim.requests())
        .filter((r) => r.path === "/v1/messages" && r.querySource === "agent:reviewer")
        .sort((a, b) => a.startedAt - b.startedAt);
      expect(forks).toHaveLength(3);
      const [first, ...others] = forks;
      // The first writes the prefix on its model (nothing to read yet); the others wait for it.
      expect(first?.usage?.cache_read_input_tokens).toBe(0);
      expect(first?.usage?.cache_creation_input_tokens).toBeGreaterThan(1_000);
      for (const fork of others) {
        expect(fork.startedAt).toBeGreaterThanOrEqual(first?.firstByteAt ?? Number.POSITIVE_INFINITY);
        expect(fork.usage?.cache_read_input_tokens ?? 0).toBeGreaterThan(1_000);
      }
    });
  });

  it("rename X to Y in FILE: the file on disk is edited (Read, then Edit)", async () => {
    const result = await runCliInProcess(
      ["run", "rename oldName to newName in notes.ts", "--permission-mode", "acceptEdits"],
      { cwd: dir },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("Renamed oldName to newName in notes.ts.");
    expect(await readFile(join(dir, "notes.ts"), "utf8")).toBe("export function newName() {}\nnewName();\n");
  });
});
