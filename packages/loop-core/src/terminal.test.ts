import { describe, expect, it } from "vitest";
import { CONTINUE_REASONS, TERMINAL_REASONS } from "./terminal.js";

describe("terminal and continue reasons", () => {
  it("R-L6: exactly 10 distinct terminal reasons", () => {
    expect(new Set(TERMINAL_REASONS).size).toBe(10);
  });
  it("R-L7: the 7 distinct continue reasons of the seed, and the pause_turn_continuation", () => {
    expect(new Set(CONTINUE_REASONS).size).toBe(8);
    expect(CONTINUE_REASONS.at(-1)).toBe("pause_turn_continuation");
  });
});
