import { randomUUID } from "node:crypto";
import type Anthropic from "@anthropic-ai/sdk";
import type { PermissionMode } from "@forkloop/loop-core";
import type { SDKStatusMessage, SDKUserMessageReplay } from "./agent-sdk-types/other-messages.js";

/**
 * R-K2: what the Agent SDK yields when a control method changes the session: `setPermissionMode()`
 * as a `status` message naming the new mode, `setModel()` as the `/model` command's echoed output
 * (a replayed user message), each in the stream where the program reads its messages.
 */
export function permissionModeStatus(mode: PermissionMode, sessionId: string): SDKStatusMessage {
  return {
    type: "system",
    subtype: "status",
    status: null,
    permissionMode: mode,
    uuid: randomUUID(),
    session_id: sessionId,
  };
}

export function modelSwitchEcho(model: string, sessionId: string): SDKUserMessageReplay {
  return {
    type: "user",
    message: {
      role: "user",
      content: `<local-command-stdout>Set model to \`${model}\`</local-command-stdout>`,
    },
    session_id: sessionId,
    parent_tool_use_id: null,
    uuid: randomUUID(),
    timestamp: new Date().toISOString(),
    isReplay: true,
    local_command_run: { command: "model", args: model },
  };
}

/**
 * R-K2: `setModel()` first asks the API whether it serves the model — a one-token request
 * without tools, as Claude Code sends — and refuses the switch, naming the model and the API's
 * answer, when it does not; the session keeps its model then.
 */
export async function probeModel(client: Anthropic, model: string, signal?: AbortSignal): Promise<void> {
  try {
    await client.messages.create(
      {
        model,
        max_tokens: 1,
        system: [{ type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." }],
        messages: [
          { role: "user", content: [{ type: "text", text: "Hi", cache_control: { type: "ephemeral" } }] },
        ],
      },
      { maxRetries: 0, timeout: 15_000, ...(signal === undefined ? {} : { signal }) },
    );
  } catch (error) {
    const status = (error as { status?: unknown }).status;
    const said = error instanceof Error ? error.message : String(error);
    throw new Error(
      `setModel("${model}") refused: the API did not accept a request for it (${typeof status === "number" ? `HTTP ${status}: ` : ""}${said}); the session keeps its model`,
    );
  }
}
