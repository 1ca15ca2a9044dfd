import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { promptStream, runToThrow, startHarness } from "./test-support/sdk-harness.js";

// R-X3 replayUserMessages (`claude --replay-user-messages`): a streaming prompt's messages are
// yielded back as sent, also one that joins a running turn (R-L2) — where the turn takes it.
function brain(request: BrainRequest): BrainReply | undefined {
  if (request.querySource !== "sdk") return undefined;
  if (request.lastToolResults.length > 0) return { content: [{ type: "text", text: "done" }] };
  return { content: [{ type: "tool_use", name: "Bash", input: { command: "sleep 1" } }] };
}

let harness: Awaited<ReturnType<typeof startHarness>>;
beforeAll(async () => {
  harness = await startHarness(brain);
});
afterAll(async () => harness?.close());

const replayed = (message: SDKMessage): string | undefined =>
  message.type === "user" && "isReplay" in message && message.isReplay === true
    ? String(message.message.content)
    : undefined;

describe("R-X3: replayUserMessages", () => {
  it("R-X3: each streamed message is yielded back once, as sent — the first after its turn's init, one that joins the running turn when the turn takes it", async () => {
    const input = promptStream();
    const run = query({
      prompt: input.stream,
      options: harness.options({ allowedTools: ["Bash"], replayUserMessages: true }),
    });
    input.push("first");
    const messages: SDKMessage[] = [];
    let pushed = false;
    await runToThrow(run, (message) => {
      messages.push(message);
      const toolUse =
        message.type === "assistant" && message.message.content.some((block) => block.type === "tool_use");
      if (toolUse && !pushed) {
        pushed = true;
        input.push("joined");
      }
      if (message.type === "result") input.end();
    });
    const kinds = messages.map(
      (message) => replayed(message) ?? `${message.type}${"subtype" in message ? `/${message.subtype}` : ""}`,
    );
    expect(kinds.filter((kind) => kind === "first" || kind === "joined")).toEqual(["first", "joined"]);
    // The first right after the init; the joined one after the call it arrived during, before the result.
    expect(kinds[kinds.indexOf("system/init") + 1]).toBe("first");
    const joinedAt = kinds.indexOf("joined");
    expect(joinedAt).toBeGreaterThan(kinds.indexOf("assistant"));
    expect(joinedAt).toBeLessThan(kinds.indexOf("result/success"));
    // Yielded once: the loop's own user message for it is not printed beside the replay.
    expect(JSON.stringify(messages).split('"joined"').length - 1).toBe(1);
  });
});
