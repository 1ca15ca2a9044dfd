import { describe, expect, it } from "vitest";
import { changedSettings, resumableStartSettings } from "./resume-settings.js";

describe("a resume's start settings", () => {
  const stored = {
    sandbox: "off",
    "permission-mode": "bypassPermissions",
    concurrency: "8",
    "trust-project": true,
  };

  it("R-S11: a batch in the checkout keeps no stored setting that loosens unless the resume gives it again", () => {
    expect(resumableStartSettings(stored, { sandbox: "off" }, true)).toEqual({
      kept: { sandbox: "off", concurrency: "8" },
      unused: ["--permission-mode bypassPermissions", "--trust-project"],
    });
  });

  it("R-R7: a batch outside the checkout resumes with everything it started with", () => {
    expect(resumableStartSettings(stored, {}, false)).toEqual({ kept: stored, unused: [] });
  });

  it("R-R7: the replaced settings are said with what they were", () => {
    expect(changedSettings({ concurrency: "8" }, { concurrency: "16", "no-warm": true })).toEqual([
      "--concurrency 16 (was 8)",
      "--no-warm (was not given)",
    ]);
    expect(changedSettings({ concurrency: "8" }, { concurrency: "8" })).toEqual([]);
    expect(changedSettings(undefined, { "allowed-tools": ["Read", "Edit"] })).toEqual([
      "--allowed-tools Read Edit",
    ]);
  });
});
