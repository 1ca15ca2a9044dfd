import { randomUUID } from "node:crypto";
import type { PromptExpansion } from "@forkloop/loop-core";
import type { SDKUserMessageReplay } from "./agent-sdk-types/other-messages.js";
import type { SDKUserMessageInput } from "./messages.js";

/** A prompt waiting for a turn: its text, and the input message it came from (streaming input). */
export interface PendingPrompt {
  readonly text: string;
  /** The input message's uuid (given, or one made up for it); absent for a string prompt or a notice. */
  readonly uuid?: string;
  /** R-T5: the notices of background tasks that ended (the turn they start says so in its result's `origin`). */
  readonly taskNotification?: true;
  /** R-X1: the command `text` expanded from, as typed (the prompt hooks see it). */
  readonly expansion?: PromptExpansion;
}

/**
 * R-X3 `replayUserMessages` (`claude --replay-user-messages`): each user message of the input
 * stream is printed back as the host sent it (`isReplay: true`), when a turn takes it — as its
 * turn starts (after the turn's `system/init`), or where it joins a running turn — so a host
 * knows which of its messages the session has read. Off, it remembers nothing.
 */
export class UserMessageReplay {
  readonly #enabled: boolean;
  readonly #inputs = new Map<string, SDKUserMessageInput>();

  constructor(enabled: boolean) {
    this.#enabled = enabled;
  }

  /** The pending prompt for an input message; remembered for its echo when replay is on. */
  received(input: SDKUserMessageInput, text: string): PendingPrompt & { uuid: string } {
    const uuid = input.uuid ?? randomUUID();
    if (this.#enabled) this.#inputs.set(uuid, input);
    return { text, uuid };
  }

  /** The echo of the input message `uuid`, once (undefined when replay is off or it was echoed). */
  take(uuid: string | undefined, sessionId: string, now = new Date()): SDKUserMessageReplay | undefined {
    if (uuid === undefined) return undefined;
    const input = this.#inputs.get(uuid);
    if (input === undefined) return undefined;
    this.#inputs.delete(uuid);
    return {
      type: "user",
      message: input.message,
      session_id: sessionId,
      parent_tool_use_id: input.parent_tool_use_id ?? null,
      uuid,
      timestamp: now.toISOString(),
      isReplay: true,
    };
  }
}
