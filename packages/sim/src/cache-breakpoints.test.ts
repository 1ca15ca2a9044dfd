import { describe, expect, it } from "vitest";
import { type Breakpoint, findBreakpoints } from "./cache-breakpoints.js";
import { layoutPrompt } from "./prompt-layout.js";
import { type Body, EPH, EPH_1H, system, user } from "./test-support/cache-bodies.js";

describe("R-D3: breakpoint rules", () => {
  const layoutOf = (body: Body) => layoutPrompt(body);
  const positions = (r: ReturnType<typeof findBreakpoints>): Breakpoint[] => (r.ok ? r.breakpoints : []);

  it("rejects more than 4 breakpoints with the API's wording", () => {
    const body: Body = {
      model: "m",
      messages: [1, 2, 3, 4, 5].map((i) => user(1, EPH, `m${i}`)),
    };
    const r = findBreakpoints(layoutOf(body), null);
    expect(r.ok ? null : r.error.message).toBe(
      "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    );
  });

  it("a marker inside a tool_result's content is a breakpoint at the tool_result, and counts", () => {
    const result = (id: string, markers: number) => ({
      type: "tool_result" as const,
      tool_use_id: id,
      content: Array.from({ length: markers }, (_, i) => ({
        type: "text" as const,
        text: `r${i}`,
        cache_control: EPH,
      })),
    });
    const body = (markers: number): Body => ({
      model: "m",
      messages: [
        user(1),
        { role: "assistant", content: [{ type: "tool_use", id: "t", name: "T", input: {} }] },
        { role: "user", content: [result("t", markers)] },
      ],
    });
    expect(positions(findBreakpoints(layoutOf(body(1)), null))).toEqual([{ position: 2, ttl: "5m" }]);
    const r = findBreakpoints(layoutOf(body(5)), null);
    expect(r.ok ? null : r.error.message).toBe(
      "A maximum of 4 blocks with cache_control may be provided. Found 5.",
    );
  });

  it("automatic caching takes a fifth slot when 4 explicit markers exist", () => {
    const body: Body = {
      model: "m",
      messages: [1, 2, 3, 4].map((i) => user(1, EPH, `m${i}`)).concat(user(1, null, "x")),
    };
    const r = findBreakpoints(layoutOf(body), EPH);
    expect(r.ok).toBe(false);
  });

  it("automatic caching on a block with a same-TTL marker is a no-op, a different TTL is a 400", () => {
    const body: Body = { model: "m", messages: [user(1, EPH)] };
    expect(positions(findBreakpoints(layoutOf(body), EPH))).toEqual([{ position: 0, ttl: "5m" }]);
    expect(findBreakpoints(layoutOf(body), EPH_1H).ok).toBe(false);
  });

  it("automatic caching walks back past thinking blocks", () => {
    const body: Body = {
      model: "m",
      messages: [
        user(3),
        { role: "assistant", content: [{ type: "thinking", thinking: "x", signature: "s" }] },
      ],
    };
    expect(positions(findBreakpoints(layoutOf(body), EPH))).toEqual([{ position: 0, ttl: "5m" }]);
  });

  it("rejects a 1h breakpoint after a 5m one", () => {
    const body: Body = { model: "m", system: system(EPH), messages: [user(1, EPH_1H)] };
    const r = findBreakpoints(layoutOf(body), null);
    expect(r.ok ? null : r.error.message).toMatch(/ttl='1h'.*must not come after.*ttl='5m'/);
  });
});
