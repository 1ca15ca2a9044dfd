import { describe, expect, it } from "vitest";
import { countTokens, splitByTokens, truncateToTokens } from "./tokenizer.js";

describe("R-D3: the deterministic tokenizer", () => {
  it.each([
    ["", 0],
    ["cat", 1],
    ["simulator", 3],
    ["hello world", 4],
    ["  \n\t ", 0],
    ["a,b", 3],
    ['{"a":1}', 7],
    ["snake_case_name", 4],
    ["日本語", 3],
    ["😀", 1],
    ["x😀y", 3],
  ])("countTokens(%j) = %i", (text, tokens) => {
    expect(countTokens(text)).toBe(tokens);
  });

  it("is additive over whitespace-separated pieces", () => {
    const text = "export function greet(name: string) { return name; }";
    const sum = text.split(/(?<=\s)/).reduce((n, piece) => n + countTokens(piece), 0);
    expect(countTokens(text)).toBe(sum);
  });

  it("truncates to a token budget at whitespace", () => {
    expect(truncateToTokens("one two three four", 3)).toBe("one two "); // "three" costs 2
    expect(truncateToTokens("short", 10)).toBe("short");
    expect(truncateToTokens("anything", 0)).toBe("");
    expect(countTokens(truncateToTokens("abcdefghijklmnop qr", 2))).toBeLessThanOrEqual(2);
  });

  it("splits into pieces that join back to the text", () => {
    const text = "the quick brown fox jumps over the lazy dog ".repeat(5);
    const pieces = splitByTokens(text, 8);
    expect(pieces.join("")).toBe(text);
    expect(pieces.length).toBeGreaterThan(3);
    expect(splitByTokens("", 8)).toEqual([""]);
  });
});
