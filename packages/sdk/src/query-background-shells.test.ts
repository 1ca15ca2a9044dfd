import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { livePidsWithArgument, waitFor } from "@forkloop/tools/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { startHarness } from "./test-support/sdk-harness.js";

/** A sleep duration no other process has: it names the shell's process in /proc. */
const sleeper = `${5_000_000 + Math.floor(Math.random() * 999_999)}`;
const alive = () => livePidsWithArgument(sleeper).length > 0;

function brain(request: BrainRequest): BrainReply {
  if (request.turnIndex === 0) {
    return {
      content: [
        {
          type: "tool_use",
          name: "Bash",
          input: { command: `exec sleep ${sleeper}`, run_in_background: true },
        },
      ],
      adaptiveThinking: false,
    };
  }
  return { content: [{ type: "text", text: "left it running" }], adaptiveThinking: false };
}

describe("query() and background shells", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness(brain);
  });
  afterAll(async () => {
    for (const pid of livePidsWithArgument(sleeper)) process.kill(pid, "SIGKILL");
    await harness.close();
  });

  it("R-T4: the session's close stops a background command still running, in this process (no exit sweep)", async () => {
    const abortController = new AbortController();
    const run = query({
      prompt: "start one that never ends",
      options: harness.options({ allowedTools: ["Bash"], abortController }),
    });
    const seen: SDKMessage[] = [];
    const drained = (async () => {
      try {
        for await (const message of run) seen.push(message);
      } catch {
        // The abort ends the query with an AbortError: what is asserted is the process.
      }
    })();
    expect(await waitFor(() => seen.some((message) => message.type === "result"), 500)).toBe(true);
    // Control: after the turn's result the command still runs (query() waits for it).
    expect(alive()).toBe(true);
    abortController.abort();
    await drained;
    expect(alive()).toBe(false);
  });
});
