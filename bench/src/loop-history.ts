import { createAssistantMessage, createUserMessage, type Message } from "@forkloop/loop-core";

/** A history of `size` alternating user and assistant messages and a last prompt (the loop benches' input). */
export function history(size: number): Message[] {
  const messages: Message[] = [];
  for (let index = 0; index < size; index++) {
    const text = `message ${index}: ${"lorem ipsum dolor sit amet ".repeat(8)}`;
    messages.push(
      index % 2 === 0
        ? createUserMessage(text)
        : createAssistantMessage({
            id: `msg_${index}`,
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-6",
            content: [{ type: "text", text, citations: null }],
            stop_reason: "end_turn",
            stop_sequence: null,
            usage: { input_tokens: 100, output_tokens: 50 },
          } as never),
    );
  }
  messages.push(createUserMessage("Go on."));
  return messages;
}
