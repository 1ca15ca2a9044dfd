import { type ContentBlock, MessageAccumulator, type RawMessageStreamEvent } from "@forkloop/loop-core";
import { blockLineUuid } from "./line-uuids.js";
import type { SDKMessage } from "./messages.js";

/**
 * R-K2: with partial messages, the Agent SDK yields each content block's assistant line just
 * before that block's `content_block_stop` (as the block stood then: stop_reason null, the usage
 * of message_start). The last block's line must carry the transcript message's uuid (resume and
 * rewind key on it), known only once the loop hands out the finished message, and which block is
 * the last is known only when the next block starts or the message ends. So a block's stop (and
 * what follows it) is held: released behind the block's line when the next block starts, or
 * behind the last block's line when the message arrives.
 */
export class PartialBlockLines {
  readonly #lineFor: (block: ContentBlock, uuid: string, envelope: object, requestId?: string) => SDKMessage;
  #requestId: string | undefined;
  #accumulator = new MessageAccumulator();
  #envelope: object | undefined;
  #messageId: string | undefined;
  #held: { block: ContentBlock; lines: SDKMessage[] } | undefined;
  /** Blocks of the streamed message whose line was given. */
  #given = 0;

  constructor(
    lineFor: (block: ContentBlock, uuid: string, envelope: object, requestId?: string) => SDKMessage,
  ) {
    this.#lineFor = lineFor;
  }

  /** What one stream event's line becomes: itself, nothing yet (held), or released behind a block's line. */
  stream(event: RawMessageStreamEvent, line: SDKMessage, requestId?: string): SDKMessage[] {
    if (event.type === "message_start") {
      const before = this.flush();
      this.#requestId = requestId;
      this.#accumulator = new MessageAccumulator();
      this.#envelope = structuredClone(event.message);
      this.#messageId = event.message.id;
      this.#given = 0;
      this.#accumulator.push(event);
      return [...before, line];
    }
    const released = event.type === "content_block_start" ? this.flush() : [];
    const completed = this.#accumulator.push(event);
    if (event.type === "content_block_stop" && completed) {
      this.#held = { block: structuredClone(completed), lines: [line] };
      return released;
    }
    if (this.#held) {
      this.#held.lines.push(line);
      return released;
    }
    return [...released, line];
  }

  /**
   * The finished message's block lines not given yet (`lines`, one per block, the last with the
   * message's uuid), with the held stop behind them; all of `lines` for a message not streamed.
   */
  finished(messageId: string, lines: readonly SDKMessage[]): SDKMessage[] {
    if (messageId !== this.#messageId || this.#envelope === undefined) return [...this.flush(), ...lines];
    const rest = lines.slice(this.#given).map((line) => {
      const { message } = line as { message: object };
      // As the block stood at its stop: no stop reason yet, the usage of message_start.
      const { stop_reason, stop_sequence, usage } = this.#envelope as Record<string, unknown>;
      return { ...line, message: { ...message, stop_reason, stop_sequence, usage } } as SDKMessage;
    });
    const held = this.#held?.lines ?? [];
    this.#held = undefined;
    this.#messageId = undefined;
    this.#given = lines.length;
    return [...rest, ...held];
  }

  /**
   * The held block's line (another block followed, or the stream was cut) and its stop. Its uuid
   * is the one the finished message's line at that place gets (line-uuids.ts), so it leads back to
   * the transcript entry (resumeSessionAt).
   */
  flush(): SDKMessage[] {
    const held = this.#held;
    if (!held || this.#envelope === undefined) return [];
    this.#held = undefined;
    const uuid = blockLineUuid(this.#messageId ?? "", this.#given);
    this.#given++;
    return [this.#lineFor(held.block, uuid, this.#envelope, this.#requestId), ...held.lines];
  }
}
