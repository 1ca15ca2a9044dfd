import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BrainReply, BrainRequest } from "@forkloop/sim";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SDKMessage } from "./messages.js";
import { query } from "./query.js";
import { startHarness } from "./test-support/sdk-harness.js";

/**
 * Prints, then waits for a file the parent's next request makes — it can end only after the call
 * was answered — and then outlives the foreground timeout (FOREGROUND_TIMEOUT_MS) it started with.
 * `started.log` counts its runs (a restart would add a line).
 */
const COMMAND =
  "echo run >> started.log; echo BEFORE-MOVE; while [ ! -e go ]; do sleep 0.05; done; sleep 5.5; echo AFTER-MOVE";
const FOREGROUND_TIMEOUT_MS = 5_000;
/** Only a deadlock breaker: the parent's next request makes the file first when the move works. */
const GATE_FALLBACK_MS = 4_000;

let dir = "";
let releasedBy: string | undefined;
let notifiedOutput = "";

const text = (value: string): BrainReply => ({ content: [{ type: "text", text: value }] });

function release(by: string): void {
  if (releasedBy !== undefined) return;
  releasedBy = by;
  writeFileSync(join(dir, "go"), "");
}

function parent(request: BrainRequest): BrainReply | undefined {
  if (request.querySource !== "sdk") return undefined;
  const results = request.lastToolResults.map((result) => result.content).join("\n");
  const user = request.lastUserText ?? "";
  if (user.includes("<task-notification>")) {
    // The shell's file goes with the session: read it while the notice is fresh.
    const file = /<output-file>([^<]+)<\/output-file>/.exec(user)?.[1] ?? "";
    notifiedOutput = existsSync(file) ? readFileSync(file, "utf8") : "";
    return text("noted");
  }
  if (results.includes("Command was manually backgrounded by user")) {
    // The moved call answered while the command still runs: this request lets it end.
    release("parent");
    return text("moved on");
  }
  if (request.turnIndex > 0) return text("nothing more");
  return {
    content: [
      {
        type: "tool_use",
        name: "Bash",
        input: { command: COMMAND, description: "wait for go", timeout: FOREGROUND_TIMEOUT_MS },
      },
    ],
  };
}

describe("R-T5: query().backgroundTasks() moves a running foreground Bash call to the background", () => {
  let harness: Awaited<ReturnType<typeof startHarness>>;
  beforeAll(async () => {
    harness = await startHarness(parent);
    dir = harness.dir;
  });
  afterAll(async () => {
    await harness.close();
  });

  it("R-T5: the Bash call answers at once with a background shell's id, the same process goes on, and its end is a notification", async () => {
    const q = query({
      prompt: "wait for go",
      options: harness.options({
        permissionMode: "bypassPermissions",
        allowDangerouslySkipPermissions: true,
      }),
    });
    const messages: SDKMessage[] = [];
    let bashUseId: string | undefined;
    let moving: Promise<[boolean, boolean]> | undefined;
    let ended = false;
    for await (const message of q) {
      messages.push(message);
      const bash =
        message.type === "assistant"
          ? message.message.content.find((block) => block.type === "tool_use" && block.name === "Bash")
          : undefined;
      if (bash?.type === "tool_use" && bashUseId === undefined) {
        const id = bash.id;
        bashUseId = id;
        // The query runs the call as it is iterated: move it from beside the loop, once the
        // command logged its start (the call is still the turn's, in the foreground).
        moving = (async () => {
          while (!existsSync(join(dir, "started.log")) && !ended)
            await new Promise((resolve) => setTimeout(resolve, 20));
          setTimeout(() => release("fallback"), GATE_FALLBACK_MS).unref();
          return [await q.backgroundTasks("toolu_not_a_call"), await q.backgroundTasks(id)];
        })();
      }
    }
    ended = true;
    const [unmatched, moved] = (await moving) ?? [];
    expect(unmatched).toBe(false);
    expect(moved).toBe(true);
    // The command ended only because the parent's next request came while it ran.
    expect(releasedBy).toBe("parent");
    // Not restarted: one run.
    expect(readFileSync(join(dir, "started.log"), "utf8")).toBe("run\n");

    const main = harness.sim
      .requests()
      .filter((record) => record.path === "/v1/messages" && record.querySource === "sdk");
    const movedBody = main.find((record) => record.rawBody.includes("manually backgrounded"))?.rawBody ?? "";
    // The id the model gets is a background shell's, as run_in_background gives it.
    const shellId = /backgrounded by user with ID: (b[a-z0-9]{8})\./.exec(movedBody)?.[1];
    expect(shellId).toBeDefined();
    const noticed = main.find((record) => record.rawBody.includes("task-notification"))?.rawBody ?? "";
    expect(noticed).toContain(`<task-id>${shellId}</task-id>`);
    expect(noticed).toContain(`<tool-use-id>${bashUseId}</tool-use-id>`);
    expect(noticed).toContain("<status>completed</status>");
    // What it printed before and after the move, in its shell's file.
    expect(notifiedOutput).toContain("BEFORE-MOVE");
    // Moved, it runs under a background command's time limit, not the call's.
    expect(notifiedOutput).toContain("AFTER-MOVE");
    expect(notifiedOutput).toContain("[exited with code 0]");
    expect(messages.filter((message) => message.type === "result").at(-1)).toMatchObject({
      subtype: "success",
      result: "noted",
    });
  });
});
