import { describe, expect, it } from "vitest";
import { plural } from "./plural.js";

describe("plural", () => {
  it("one turn is singular, other counts plural", () => {
    expect(plural(1, "turn")).toBe("1 turn");
    expect(plural(0, "turn")).toBe("0 turns");
    expect(plural(2, "message")).toBe("2 messages");
    expect(plural(3, "entry", "entries")).toBe("3 entries");
  });
});
