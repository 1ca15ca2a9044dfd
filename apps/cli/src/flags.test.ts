import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CliError } from "./cli-error.js";
import { closestFlag, parseCommand } from "./flags.js";
import { parseTokenBudget } from "./token-budget-flag.js";

const spec = {
  command: "demo",
  usage: "Usage: forkloop demo",
  options: { concurrency: { type: "string" as const }, verbose: { type: "boolean" as const } },
  schema: z.object({
    concurrency: z.string().regex(/^\d+$/, "must be a whole number, e.g. --concurrency 8").optional(),
    verbose: z.boolean().optional(),
  }),
};

function failure(argv: string[]): CliError {
  try {
    parseCommand(spec, argv);
  } catch (error) {
    if (error instanceof CliError) return error;
    throw error;
  }
  throw new Error("expected a CliError");
}

describe("flag parsing: bad input names the problem and the fix (exit 2)", () => {
  it("suggests the nearest flag for a typo", () => {
    const error = failure(["--concurency", "3"]);
    expect(error.exitCode).toBe(2);
    expect(error.message).toMatch(/unknown flag --concurency\. Did you mean --concurrency\?/);
  });

  it("names the flag and the expected form for a bad value", () => {
    expect(failure(["--concurrency", "many"]).message).toMatch(
      /--concurrency: must be a whole number, e.g. --concurrency 8/,
    );
  });

  it("parses good flags and keeps positionals", () => {
    expect(parseCommand(spec, ["--concurrency", "4", "hello"])).toEqual({
      flags: { concurrency: "4" },
      positionals: ["hello"],
      given: { concurrency: "4" },
    });
  });

  it("closestFlag gives nothing for a far-off word", () => {
    expect(closestFlag("zzzzzzzz", ["concurrency"])).toBeUndefined();
  });
});

describe("R-L14: --budget token budgets", () => {
  it.each([
    ["+500k", 500_000],
    ["500000", 500_000],
    ["1.5m", 1_500_000],
    ["+2K", 2_000],
  ])("%s → %d tokens", (text, tokens) => {
    expect(parseTokenBudget(text)).toEqual({ ok: true, tokens });
  });

  it.each(["lots", "-5k", "+10"])("%s is refused with an example of the right form", (text) => {
    const parsed = parseTokenBudget(text);
    expect(parsed.ok).toBe(false);
  });
});
