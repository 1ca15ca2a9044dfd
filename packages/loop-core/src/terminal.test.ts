import { describe, expect, it } from "vitest";
import { CONTINUE_REASONS, TERMINAL_REASONS } from "./terminal.js";

describe("terminal and continue reasons", () => {
  it("R-L6: exactly 10 distinct terminal reasons", () => {
    expect(new Set(TERMINAL_REASONS).size).toBe(10);
  });
  it("R-L7: exactly 7 distinct continue reasons", () => {
    expect(new Set(CONTINUE_REASONS).size).toBe(7);
  });
});
