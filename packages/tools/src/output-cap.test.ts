import { describe, expect, it } from "vitest";
import { capHeadTail, HeadTailBuffer } from "./output-cap.js";

describe("HeadTailBuffer", () => {
  it("R-T3: keeps text under the cap unchanged, across chunks", () => {
    const buffer = new HeadTailBuffer(10);
    for (const chunk of ["ab", "cd", "ef"]) buffer.append(chunk);
    expect(buffer.toString()).toBe("abcdef");
  });

  it("R-T3: keeps head and tail and counts the omitted middle, across chunks", () => {
    const buffer = new HeadTailBuffer(10);
    for (const chunk of ["01234", "56789", "abcde", "fghij"]) buffer.append(chunk);
    expect(buffer.omittedChars).toBe(10);
    expect(buffer.toString()).toBe("01234\n\n… 10 characters omitted …\n\nfghij");
    expect(capHeadTail("0123456789abcdefghij", 10)).toBe(buffer.toString());
  });

  it("a cut inside a surrogate pair leaves no lone half at either end", () => {
    // "😀" is two UTF-16 units; a cap of 10 keeps 5 + 5, each cut splitting a pair.
    const text = `abcd😀${"x".repeat(20)}😀efgh`;
    const cut = capHeadTail(text, 10);
    expect(cut).toBe("abcd\n\n… 24 characters omitted …\n\nefgh");
    expect(cut).not.toMatch(/[\uD800-\uDFFF]/u); // in a u-regex a lone half matches, a pair does not
  });
});
