import { describe, expect, it } from "vitest";
import { OptionsError } from "./options-error.js";
import { parseRunRequest } from "./slash-commands.js";

describe("run's slash commands", () => {
  it.each([
    ["/compact", ""],
    ["/compact keep the API names", "keep the API names"],
    ["  /compact\n  keep\n  both lines ", "keep\n  both lines"],
  ])("%j is /compact with instructions %j", (prompt, instructions) => {
    expect(parseRunRequest(prompt)).toEqual({ kind: "compact", instructions });
  });

  it.each(["Summarize README.md", "/tmp/notes.txt: what is in it?", "a /compact later in the prompt"])(
    "%j is a prompt",
    (prompt) => {
      expect(parseRunRequest(prompt)).toEqual({ kind: "prompt", prompt });
    },
  );

  it("an unknown command is exit 2 naming the known ones", () => {
    const attempt = () => parseRunRequest("/clear now");
    expect(attempt).toThrow(OptionsError);
    expect(attempt).toThrow("unknown slash command /clear. Known: /compact [instructions]");
    expect(() => parseRunRequest("/compacting")).toThrow("unknown slash command /compacting");
  });
});
