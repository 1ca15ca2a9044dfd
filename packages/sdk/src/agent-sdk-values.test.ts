import type { BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILTIN_TOOL_NAMES, SYSTEM_PROMPT_DYNAMIC_BOUNDARY } from "./agent-sdk-constants.js";
import { OptionsError } from "./options-error.js";
import { foldSessionSummary, InMemorySessionStore, importSessionToStore } from "./session-store.js";
import { filterEscalatingDefaultMode, matchDeniedModels, resolveSettings } from "./settings-resolution.js";
import { RuntimeRegistry } from "./shared-runtime.js";
import { projectKey } from "./state-dirs.js";
import { collectMessages, runQuery, startHarness } from "./test-support/sdk-harness.js";
import { builtinToolNames } from "./tool-selection.js";
import { prewarm, startup } from "./warm-start.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

function brain(request: BrainRequest) {
  if (request.querySource?.startsWith("agent:"))
    return { content: [{ type: "text" as const, text: "report" }] };
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text" as const, text: "done" }] };
  if ((request.lastUserText ?? "").includes("delegate")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "help", prompt: "Say hi.", subagent_type: "general-purpose" },
        },
      ],
    };
  }
  return undefined;
}

describe("R-K1: the Agent SDK's other exported values, on forkloop", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  afterAll(async () => {
    await harness.close();
  });

  it("R-K1: startup() starts the endpoint, client and pool before the prompt; its query uses them and gives them back", async () => {
    const runtimes = new RuntimeRegistry();
    const warm = await startup({ options: harness.options(), runtimes });
    expect(runtimes.started).toBe(1);
    const messages = await collectMessages(warm.query("hello"));
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success" });
    // The query shared the warm runtime: nothing else was started, and all of it was given back.
    expect(runtimes.started).toBe(1);
    const again = await runtimes.acquire(harness.options().env ?? {}, () => {});
    expect(again.users).toBe(1);
    await again.release();
    expect(() => warm.query("twice")).toThrow(OptionsError);
  });

  it("R-K1: prewarm() is claimed with the session's directory; claimed names the session; an unclaimed spare closes", async () => {
    const runtimes = new RuntimeRegistry();
    const spare = await prewarm({ options: harness.options(), runtimes });
    const run = spare.claim({ prompt: "hello", options: { cwd: harness.dir, model: "claude-haiku-4-5" } });
    const messages = await collectMessages(run);
    const claimed = await spare.claimed;
    expect(claimed).toMatchObject({
      cwd: harness.dir,
      sessionId: messages[0]?.session_id,
      sdkMcpSettled: true,
    });
    expect(messages[0]).toMatchObject({ type: "system", subtype: "init", model: "claude-haiku-4-5" });
    await spare.exited;

    const unclaimed = await prewarm({ options: harness.options(), runtimes });
    unclaimed.close();
    await expect(unclaimed.claimed).rejects.toThrow(/spare_closed/);
    await unclaimed.exited;
  });

  it("R-K1: importSessionToStore copies a saved session and its sub-agents into InMemorySessionStore, summarised", async () => {
    const id = (await runQuery("delegate a greeting", harness.options()))[0]?.session_id ?? "";
    const store = new InMemorySessionStore();
    await importSessionToStore(id, store, { ...harness.at, batchSize: 2 });
    expect(store.size).toBe(1);
    const [listed] = await store.listSessions(projectKey(harness.dir));
    expect(listed?.sessionId).toBe(id);
    const [summary] = await store.listSessionSummaries(projectKey(harness.dir));
    expect(summary?.data).toMatchObject({ firstPrompt: "delegate a greeting", isSidechain: false });
    const key = { projectKey: projectKey(harness.dir), sessionId: id };
    const subkeys = await store.listSubkeys(key);
    expect(subkeys).toHaveLength(1);
    expect(subkeys[0]).toMatch(/^agents\//);
    const entries = (await store.load(key)) ?? [];
    expect(entries[0]?.type).toBe("session_start");
    expect(
      entries.filter((entry) => entry.type === "message").every((entry) => typeof entry.uuid === "string"),
    ).toBe(true);
    expect(JSON.parse(JSON.stringify(entries))).toEqual(entries);

    await store.delete(key);
    expect(store.size).toBe(0);
    expect(await store.listSubkeys(key)).toEqual([]);
    expect(await store.load(key)).toBeNull();
  });

  it("R-K1: foldSessionSummary keeps the first cwd and prompt and the latest title; mtime is the store's", () => {
    const key = { projectKey: "p", sessionId: "s" };
    const first = foldSessionSummary(
      undefined,
      key,
      [
        { type: "session_start", cwd: "/a", createdAt: "2026-01-01T00:00:00Z" },
        { type: "message", uuid: "u1", message: { type: "user", message: { content: "first" } } },
        { type: "custom-title", customTitle: "One" },
      ],
      { mtime: 5 },
    );
    const next = foldSessionSummary(first, key, [
      { type: "session_start", cwd: "/b" },
      {
        type: "message",
        uuid: "u2",
        message: { type: "user", message: { content: [{ type: "text", text: "second" }] } },
      },
      { type: "custom-title", customTitle: "Two" },
    ]);
    expect(next).toEqual({
      sessionId: "s",
      mtime: 5,
      data: {
        cwd: "/a",
        createdAt: "2026-01-01T00:00:00Z",
        isSidechain: false,
        firstPrompt: "first",
        lastPrompt: "second",
        customTitle: "Two",
      },
    });
  });

  it("R-K1: matchDeniedModels compares ids (a trailing * names a family); filterEscalatingDefaultMode drops a project's escalating mode", async () => {
    expect(
      await matchDeniedModels(
        ["claude-opus-4-7", "claude-haiku-4-5", "Claude-Sonnet-4-6"],
        ["claude-opus-*", "claude-sonnet-4-6", 7 as never],
      ),
    ).toEqual({
      denied: [true, false, true],
      warnings: ["deniedModels entry 7 is not a model name; ignored"],
    });
    const fromProject = {
      effective: { permissions: { defaultMode: "bypassPermissions", allow: ["Read"] } },
      provenance: {},
      sources: [
        { source: "project" as const, settings: { permissions: { defaultMode: "bypassPermissions" } } },
      ],
    };
    expect(filterEscalatingDefaultMode(fromProject)).toEqual({ permissions: { allow: ["Read"] } });
    const fromUser = {
      ...fromProject,
      sources: [{ source: "user" as const, settings: { permissions: { defaultMode: "bypassPermissions" } } }],
    };
    expect(filterEscalatingDefaultMode(fromUser)).toBe(fromUser.effective);
    await expect(resolveSettings()).rejects.toThrow(/resolveSettings\(\) is not supported/);
  });

  it("R-K1: BUILTIN_TOOL_NAMES are forkloop's built-in tools and its fork tools", () => {
    expect([...BUILTIN_TOOL_NAMES]).toEqual([...builtinToolNames(), "Agent", "Skill"].sort());
  });

  it("R-K1: a string[] systemPrompt is joined and SYSTEM_PROMPT_DYNAMIC_BOUNDARY is never sent to the model", async () => {
    harness.sim.clearRequests();
    await runQuery(
      "hello",
      harness.options({
        systemPrompt: ["You are a release bot.", SYSTEM_PROMPT_DYNAMIC_BOUNDARY, "Today: the 3rd."],
      }),
    );
    const sent = harness.sim.requests().find((record) => record.querySource === "sdk")?.rawBody ?? "";
    expect(sent).toContain("You are a release bot.");
    expect(sent).toContain("Today: the 3rd.");
    expect(sent).not.toContain(SYSTEM_PROMPT_DYNAMIC_BOUNDARY);
  });
});
