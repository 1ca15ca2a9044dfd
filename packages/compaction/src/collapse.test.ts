import { describe, expect, it } from "vitest";
import { applyCollapse, findCollapsibleSpans, planCollapse } from "./collapse.js";
import { messageText } from "./message-shape.js";
import { createCountingFactory, createHistory } from "./testing/index.js";

function threeExchanges() {
  const history = createHistory();
  const answers = [];
  for (let i = 0; i < 3; i++) {
    history.user(`question ${i}`);
    for (let j = 0; j < 3; j++)
      history.toolCall("Read", { file_path: `/q${i}/f${j}.ts` }, "line\n".repeat(100));
    answers.push(history.answer(`answer ${i}`, { thinking: `thought ${i}` }));
  }
  return { messages: history.messages, answers };
}

describe("context collapse", () => {
  it("R-C3: finds finished exchanges before the tail and replaces their tool rounds with a digest", () => {
    const { messages, answers } = threeExchanges();
    const spans = findCollapsibleSpans(messages, messages.length - 1);
    expect(spans.map((s) => [s.start, s.end])).toEqual([
      [0, 7],
      [8, 15],
    ]);
    const collapsed = applyCollapse(messages, spans.slice(0, 1), createCountingFactory("c"));
    expect(collapsed.length).toBe(messages.length - 6);
    expect(messageText(collapsed[0]!)).toContain("question 0");
    expect(messageText(collapsed[0]!)).toContain("Read /q0/f1.ts");
    // The final answer, thinking included, is kept as the very same object (R-L17).
    expect(collapsed[1]).toBe(answers[0]);
  });

  it("R-C3: plans the oldest spans that free enough, or nothing when all of them are not enough", () => {
    const { messages } = threeExchanges();
    const spans = findCollapsibleSpans(messages, messages.length - 1);
    const one = spans[0]!.tokensFreed;
    expect(planCollapse(spans, one)?.length).toBe(1);
    expect(planCollapse(spans, one + 1)?.length).toBe(2);
    expect(planCollapse(spans, one * 10)).toBeNull();
  });
});
