import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OptionsError } from "./options-error.js";
import { query } from "./query.js";
import { forkSession, getSessionMessages, listSessions } from "./session-helpers.js";
import {
  archiveSession,
  deleteSession,
  getSessionInfo,
  getSubagentMessages,
  listSubagents,
  renameSession,
  tagSession,
  unarchiveSession,
} from "./session-management.js";
import { metadataPath } from "./session-metadata.js";
import { collectMessages, promptStream, runQuery, startHarness } from "./test-support/sdk-harness.js";

type Harness = Awaited<ReturnType<typeof startHarness>>;

function brain(request: BrainRequest) {
  if (request.querySource?.startsWith("agent:")) {
    return { content: [{ type: "text" as const, text: "the helper's report" }] };
  }
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text" as const, text: "done" }] };
  if ((request.lastUserText ?? "").includes("delegate")) {
    return {
      content: [
        {
          type: "tool_use" as const,
          name: "Agent",
          input: { description: "help", prompt: "Count to three.", subagent_type: "general-purpose" },
        },
      ],
    };
  }
  return undefined;
}

async function newSession(harness: Harness, prompt: string): Promise<string> {
  return (await runQuery(prompt, harness.options()))[0]?.session_id ?? "";
}

describe("R-K1: the Agent SDK's session management on forkloop's saved sessions", () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  afterAll(async () => {
    await harness.close();
  });

  it("R-K1: renameSession, tagSession and archiveSession show in getSessionInfo and listSessions; a fork takes the title; resuming unarchives", async () => {
    const id = await newSession(harness, "start a grocery list: milk");
    const fresh = await getSessionInfo(id, harness.at);
    expect(fresh).toMatchObject({ sessionId: id, summary: "start a grocery list: milk" });
    expect(fresh?.customTitle).toBeUndefined();
    expect(typeof fresh?.createdAt).toBe("number");
    expect(fresh?.fileSize).toBeGreaterThan(0);

    await renameSession(id, "Groceries", harness.at);
    await tagSession(id, "home", harness.at);
    await archiveSession(id, harness.at);
    expect(await getSessionInfo(id, harness.at)).toMatchObject({
      summary: "Groceries",
      customTitle: "Groceries",
      firstPrompt: "start a grocery list: milk",
      tag: "home",
      archived: true,
    });
    expect((await listSessions(harness.at)).find((session) => session.sessionId === id)?.tag).toBe("home");
    const fork = await forkSession(id, harness.at);
    expect((await getSessionInfo(fork.sessionId, harness.at))?.customTitle).toBe("Groceries (fork)");
    const named = await forkSession(id, { ...harness.at, title: "Mine" });
    expect((await getSessionInfo(named.sessionId, harness.at))?.customTitle).toBe("Mine");

    await tagSession(id, null, harness.at);
    await unarchiveSession(id, harness.at);
    const cleared = await getSessionInfo(id, harness.at);
    expect(cleared?.tag).toBeUndefined();
    expect(cleared?.archived).toBe(false);

    await archiveSession(id, harness.at);
    await runQuery("and eggs", harness.options({ resume: id }));
    expect((await getSessionInfo(id, harness.at))?.archived).toBe(false);
  });

  it("R-K1: an unknown session is undefined for getSessionInfo and an OptionsError for the changes; a damaged metadata file reads as none", async () => {
    expect(await getSessionInfo("0b1c4c7e-0000-4000-8000-000000000000", harness.at)).toBeUndefined();
    await expect(renameSession("0b1c4c7e-0000-4000-8000-000000000000", "x", harness.at)).rejects.toThrow(
      OptionsError,
    );
    const id = await newSession(harness, "a session with a damaged metadata file");
    await expect(renameSession(id, "  ", harness.at)).rejects.toThrow(/title is empty/);
    await expect(tagSession(id, "x", { ...harness.at, sessionStore: {} })).rejects.toThrow(/sessionStore/);
    await renameSession(id, "Before", harness.at);
    const path = metadataPath(join(harness.at.stateDir, "sessions"), id);
    expect(existsSync(path)).toBe(true);
    writeFileSync(path, '{"customTitle": 42, "tag": ');
    expect((await getSessionInfo(id, harness.at))?.customTitle).toBeUndefined();
    await renameSession(id, "After", harness.at);
    expect((await getSessionInfo(id, harness.at))?.customTitle).toBe("After");
  });

  it("R-K1: listSubagents and getSubagentMessages read a sub-agent's own conversation; deleteSession removes it all", async () => {
    const id = await newSession(harness, "delegate the counting");
    const agents = await listSubagents(id, harness.at);
    expect(agents).toHaveLength(1);
    const messages = await getSubagentMessages(id, agents[0] ?? "", harness.at);
    expect(messages[0]?.type).toBe("user");
    expect(JSON.stringify(messages.at(-1)?.message)).toContain("the helper's report");
    expect(messages.every((message) => message.session_id === id && message.parent_agent_id === null)).toBe(
      true,
    );
    expect(await getSubagentMessages(id, "no-such-agent", harness.at)).toEqual([]);
    expect(await getSubagentMessages(id, "../escape", harness.at)).toEqual([]);

    await renameSession(id, "To delete", harness.at);
    await deleteSession(id, harness.at);
    expect(await getSessionInfo(id, harness.at)).toBeUndefined();
    expect((await listSessions(harness.at)).map((session) => session.sessionId)).not.toContain(id);
    const sessionsDir = join(harness.at.stateDir, "sessions");
    expect(existsSync(join(sessionsDir, id))).toBe(false);
    expect(existsSync(metadataPath(sessionsDir, id))).toBe(false);
    await expect(getSessionMessages(id, harness.at)).rejects.toThrow(OptionsError);
  });

  it("R-R5: deleteSession refuses a session a query is running (its lock is held), and deletes it once the query ends", async () => {
    const input = promptStream();
    const run = query({ prompt: input.stream, options: harness.options() });
    input.push("hello");
    let id = "";
    for await (const message of run) {
      id = message.session_id ?? id;
      if (message.type === "result") break;
    }
    // `break` closed the query; a fresh one holds the session open while the delete is tried.
    const held = promptStream();
    const resumed = query({ prompt: held.stream, options: harness.options({ resume: id }) });
    held.push("still here");
    const iterator = resumed[Symbol.asyncIterator]();
    while (true) {
      const step = await iterator.next();
      if (step.done || step.value.type === "result") break;
    }
    await expect(deleteSession(id, harness.at)).rejects.toThrow(/in use|held|running/i);
    held.end();
    await collectMessages({ [Symbol.asyncIterator]: () => iterator });
    await deleteSession(id, harness.at);
    expect(await getSessionInfo(id, harness.at)).toBeUndefined();
  });
});
