import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OptionsError } from "./options-error.js";
import { query } from "./query.js";
import { getSessionMessages, listSessions } from "./session-helpers.js";
import { getSessionInfo } from "./session-management.js";
import { runQuery, runToThrow, startHarness } from "./test-support/sdk-harness.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

const PLAN = "First I plan: read the notes.";

describe("R-K1: the Agent SDK's options forkloop acts on, takes as having no effect, or refuses at the call", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness((request) => {
      const read = { type: "tool_use" as const, name: "Read", input: { file_path: "notes.md" } };
      const asked = request.lastUserText ?? "";
      if (!asked.includes("read the notes") || request.lastToolResults.length > 0)
        return { content: [{ type: "text" as const, text: "noted" }] };
      // A reply of two blocks: yielded as two lines, only the last with the transcript's uuid.
      if (asked.includes("plan first")) return { content: [{ type: "text" as const, text: PLAN }, read] };
      return { content: [read] };
    });
  });
  afterAll(async () => {
    await harness.close();
  });

  it("R-K1: plugins and resumeSessionAt without a fork are refused at the query() call, each named with what to do instead", () => {
    const refused: [Parameters<typeof query>[0]["options"], RegExp][] = [
      [{ plugins: [{ type: "local", path: "./p" }] }, /^plugins: forkloop has no plugins/],
      [{ resume: "s", resumeSessionAt: "u-1" }, /^resumeSessionAt "u-1": .*add forkSession: true/],
      [{ taskBudget: { total: 0 } }, /^taskBudget \{"total":0\}: give total as a positive whole number/],
      [{ persistSession: false, continue: true }, /^persistSession: false with resume or continue/],
    ];
    for (const [options, message] of refused) {
      let thrown: unknown;
      try {
        query({ prompt: "hi", options: harness.options(options) });
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(OptionsError);
      expect((thrown as Error).message).toMatch(message);
    }
    // Every problem at once, one line each.
    expect(() =>
      query({
        prompt: "hi",
        options: harness.options({ plugins: [{ type: "local", path: "p" }], resumeSessionAt: "u" }),
      }),
    ).toThrow(/^plugins: .*\nresumeSessionAt "u": /);
  });

  it("R-K1: the process options have no effect and no word; skills 'all' and no plugins are the default", async () => {
    const warnings: string[] = [];
    const messages = await runQuery(
      "hello",
      harness.options({
        stderr: (line) => warnings.push(line),
        executable: "bun",
        executableArgs: ["--smol"],
        pathToClaudeCodeExecutable: "/nowhere/claude",
        spawnClaudeCodeProcess: () => {
          throw new Error("no process is spawned");
        },
        skills: "all",
        plugins: [],
      }),
    );
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "noted" });
    expect(warnings).toEqual([]);
  });

  it("R-K1: debug writes forkloop run --debug's lines (the main agent's tool calls) on stderr; debugFile appends them to the file", async () => {
    const warnings: string[] = [];
    await runQuery("read the notes", harness.options({ stderr: (line) => warnings.push(line), debug: true }));
    expect(warnings).toEqual(['→ Read {"file_path":"notes.md"}\n']);
    await runQuery("read the notes", harness.options({ debugFile: "debug.log" }));
    expect(readFileSync(join(harness.dir, "debug.log"), "utf8")).toBe('→ Read {"file_path":"notes.md"}\n');
  });

  it("R-K1: persistSession: false keeps nothing on disk (the session is not listed); title names a new session, and a resumed one keeps its own", async () => {
    const gone = await runQuery("forget me", harness.options({ persistSession: false }));
    expect(gone.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    const goneId = gone[0]?.session_id ?? "";
    expect(await getSessionInfo(goneId, harness.at)).toBeUndefined();
    expect((await listSessions(harness.at)).map((session) => session.sessionId)).not.toContain(goneId);

    const kept = await runQuery("keep me", harness.options({ title: "Groceries" }));
    const id = kept[0]?.session_id ?? "";
    expect(await getSessionInfo(id, harness.at)).toMatchObject({
      customTitle: "Groceries",
      summary: "Groceries",
    });
    await runQuery("more", harness.options({ resume: id, title: "Other" }));
    expect((await getSessionInfo(id, harness.at))?.customTitle).toBe("Groceries");
  });

  it("R-L3: taskBudget is sent as output_config.task_budget under its beta, the remaining tokens counted down", async () => {
    harness.sim.clearRequests();
    const messages = await runQuery("hello", harness.options({ taskBudget: { total: 9000 } }));
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    const sent = harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === "sdk");
    expect(sent.length).toBeGreaterThan(0);
    for (const record of sent) {
      const budget = JSON.parse(record.rawBody).output_config?.task_budget;
      expect(budget).toMatchObject({ type: "tokens", total: 9000 });
      expect(budget.remaining).toBeLessThan(9000);
      expect(record.headers["anthropic-beta"]).toContain("task-budgets-2026-03-13");
    }
  });

  it("R-X3: agent runs the main session as that agent type — its prompt as the system prompt, only its tools; a type no definition has is an OptionsError naming it", async () => {
    harness.sim.clearRequests();
    const messages = await runQuery(
      "hello",
      harness.options({
        agents: {
          reviewer: { description: "Reviews", prompt: "You review code, tersely.", tools: ["Read"] },
        },
        agent: "reviewer",
      }),
    );
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    const sent = harness.sim
      .requests()
      .find((record) => record.path === "/v1/messages" && record.querySource === "sdk");
    const body = JSON.parse(sent?.rawBody ?? "{}");
    expect(JSON.stringify(body.system)).toContain("You review code, tersely.");
    expect(body.tools.map((tool: { name: string }) => tool.name)).toEqual(["Read"]);

    const { thrown } = await runToThrow(
      query({ prompt: "hi", options: harness.options({ agent: "nobody" }) }),
    );
    expect(thrown).toBeInstanceOf(OptionsError);
    expect((thrown as Error).message).toMatch(
      /^agent: no agent type "nobody"; define it with the agents option or in \.claude\/agents\/nobody\.md/,
    );
  });

  it("R-K1: resumeSessionAt with resume and forkSession continues from that message in a new session; the original is kept whole", async () => {
    const first = await runQuery("remember the colour blue", harness.options());
    const id = first[0]?.session_id ?? "";
    // A message of the saved session by getSessionMessages' uuid (a yielded line's uuid: below).
    const cut =
      (await getSessionMessages(id, harness.at)).find((message) => message.type === "assistant")?.uuid ?? "";
    await runQuery("now remember green", harness.options({ resume: id }));
    const forked = await runQuery(
      "what colour?",
      harness.options({ resume: id, forkSession: true, resumeSessionAt: cut }),
    );
    const forkId = forked[0]?.session_id ?? "";
    expect(forkId).not.toBe(id);
    const texts = (messages: { message: unknown }[]) => JSON.stringify(messages.map((m) => m.message));
    const forkHistory = texts(await getSessionMessages(forkId, harness.at));
    expect(forkHistory).toContain("remember the colour blue");
    expect(forkHistory).not.toContain("now remember green");
    expect(forkHistory).toContain("what colour?");
    expect(texts(await getSessionMessages(id, harness.at))).toContain("now remember green");
  });

  for (const includePartialMessages of [false, true]) {
    it(`R-K1: resumeSessionAt takes the uuid of a line the stream yielded (a reply's first block) and forks the history cut after that block${includePartialMessages ? ", with partial messages" : ""}`, async () => {
      const first = await runQuery(
        "plan first, then read the notes",
        harness.options({ includePartialMessages }),
      );
      const id = first[0]?.session_id ?? "";
      const planLine = first.find(
        (message) =>
          message.type === "assistant" &&
          message.message.content.some((block) => block.type === "text" && block.text === PLAN),
      );
      const planUuid = planLine?.uuid ?? "";
      // Not the transcript's id: the reply's last line (its Read call) carries that one.
      expect((await getSessionMessages(id, harness.at)).map((message) => message.uuid)).not.toContain(
        planUuid,
      );
      const before = harness.sim.requests().length;
      const forked = await runQuery(
        "what was the plan?",
        harness.options({ resume: id, forkSession: true, resumeSessionAt: planUuid }),
      );
      expect(forked.at(-1)).toMatchObject({ type: "result", subtype: "success" });
      const [next] = harness.sim.requests().slice(before);
      const body = JSON.parse(next?.rawBody ?? "{}") as {
        messages: { role: string; content: string | { type: string; text?: string }[] }[];
      };
      const blocks = (content: string | { type: string; text?: string }[]) =>
        typeof content === "string" ? [{ type: "text", text: content }] : content;
      // The first prompt, the reply up to its plan (no Read call, no result), the new prompt.
      expect(body.messages.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
      // (The simulator's replies think first: that block is kept, being before the plan.)
      const kept = blocks(body.messages[1]?.content ?? "").filter((block) => block.type !== "thinking");
      expect(kept).toMatchObject([{ type: "text", text: PLAN }]);
      expect(JSON.stringify(body.messages)).not.toContain("tool_use");
      expect(JSON.stringify(body.messages[2])).toContain("what was the plan?");
    });
  }

  it("R-K1: a skills list offers only those skills (the Skill tool's listing, init's skills); [] offers none; left out, every one", async () => {
    const project = realpathSync(mkdtempSync(join(tmpdir(), "forkloop-skills-")));
    try {
      for (const name of ["pdf", "docx"]) {
        mkdirSync(join(project, ".claude", "skills", name), { recursive: true });
        writeFileSync(
          join(project, ".claude", "skills", name, "SKILL.md"),
          `---\ndescription: Works with ${name} files\n---\nHandle the ${name} file.`,
        );
      }
      const offered = async (skills: string[] | undefined) => {
        const before = harness.sim.requests().length;
        const messages = await runQuery(
          "hello",
          harness.options({ cwd: project, ...(skills === undefined ? {} : { skills }) }),
        );
        const init = messages.find((message) => message.type === "system" && message.subtype === "init");
        const [request] = harness.sim.requests().slice(before);
        const tools = (
          JSON.parse(request?.rawBody ?? "{}") as { tools: { name: string; description: string }[] }
        ).tools;
        const skillTool = tools.find((tool) => tool.name === "Skill");
        return {
          init: init !== undefined && "skills" in init ? [...init.skills].sort() : undefined,
          listed: ["pdf", "docx"].filter((name) => skillTool?.description.includes(`- ${name}:`)),
          tool: skillTool !== undefined,
        };
      };
      expect(await offered(["pdf"])).toEqual({ init: ["pdf"], listed: ["pdf"], tool: true });
      expect(await offered([])).toEqual({ init: [], listed: [], tool: false });
      expect(await offered(undefined)).toEqual({
        init: ["docx", "pdf"],
        listed: ["pdf", "docx"],
        tool: true,
      });
    } finally {
      rmSync(project, { recursive: true, force: true });
    }
  });
});
