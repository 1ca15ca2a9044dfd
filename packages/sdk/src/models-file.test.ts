import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadModelsFile, modelsFileSchema, toModelOverrides } from "./models-file.js";

describe("models file", () => {
  it("an entry for a known model inherits what it leaves out; the client gets one ModelInfo per id and alias", () => {
    const specs = modelsFileSchema.parse([{ id: "claude-haiku-4-5-20251001", contextWindow: 100_000 }]);
    expect(specs[0]).toMatchObject({
      id: "claude-haiku-4-5-20251001",
      aliases: ["claude-haiku-4-5"],
      contextWindow: 100_000,
      maxOutputTokens: 64_000,
      inputPricePerMTok: 1,
    });
    expect(toModelOverrides(specs).map((info) => [info.id, info.contextWindow])).toEqual([
      ["claude-haiku-4-5-20251001", 100_000],
      ["claude-haiku-4-5", 100_000],
    ]);
  });

  it("a new id must give its window and output limit; the output limit must fit the window", () => {
    expect(
      modelsFileSchema.safeParse([{ id: "tiny", contextWindow: 4000 }]).error?.issues[0]?.message,
    ).toMatch(/"tiny" is not a known model, so give contextWindow and maxOutputTokens/);
    expect(
      modelsFileSchema.safeParse([{ id: "tiny", contextWindow: 4000, maxOutputTokens: 4000 }]).error
        ?.issues[0]?.message,
    ).toBe("maxOutputTokens must be below contextWindow");
    expect(
      modelsFileSchema.safeParse([{ id: "tiny", contextWindow: 4000, maxOutputTokens: 500, extra: 1 }])
        .success,
    ).toBe(false);
    const tiny = modelsFileSchema.parse([{ id: "tiny", contextWindow: 4000, maxOutputTokens: 500 }])[0];
    expect(tiny).toMatchObject({
      aliases: [],
      inputPricePerMTok: 3,
      outputPricePerMTok: 15,
      minCacheableTokens: 1024,
    });
  });

  it("a relative path is read from the given project directory, not the process's, and named as given", async () => {
    const dir = await mkdtemp(join(tmpdir(), "forkloop-models-file-"));
    try {
      await writeFile(
        join(dir, "models.json"),
        JSON.stringify([{ id: "claude-sonnet-4-6", contextWindow: 24_000, maxOutputTokens: 2000 }]),
      );
      expect((await loadModelsFile("models.json", "FORKLOOP_MODELS", dir))[0]?.contextWindow).toBe(24_000);
      await expect(loadModelsFile("models.json", "FORKLOOP_MODELS", join(dir, "elsewhere"))).rejects.toThrow(
        "FORKLOOP_MODELS models.json: cannot read it (ENOENT).",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
