import { mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { TEST_PNG_BASE64 } from "./testing/test-png.js";
import { toResultBlocks } from "./tool-content.js";
import { limitOutput } from "./tool-output.js";

const tool = "mcp__srv__dump";
const image = {
  type: "image" as const,
  source: { type: "base64" as const, media_type: "image/png" as const, data: TEST_PNG_BASE64 },
};
const tempDir = () => mkdtemp(join(tmpdir(), "forkloop-mcp-out-"));

describe("R-M1: MCP output limits (MAX_MCP_OUTPUT_TOKENS, 50,000 characters, warning at 10,000 tokens)", () => {
  it("R-M1, R-K2: a small result is shown as the server's blocks (as Claude Code gives it), one string with joinText (a structured result's JSON); its blocks are the structured output", async () => {
    const blocks = [
      { type: "text" as const, text: "a" },
      { type: "text" as const, text: "b" },
    ];
    const out = await limitOutput(blocks, false, { toolName: tool, maxOutputTokens: 25_000 });
    expect(out).toEqual({ result: { content: blocks, output: blocks } });
    const joined = await limitOutput(blocks, false, {
      toolName: tool,
      maxOutputTokens: 25_000,
      joinText: true,
    });
    expect(joined).toEqual({ result: { content: "a\nb", output: blocks } });
  });

  it("R-M1: over 50,000 characters → saved to a file in the results dir, the model gets the path and a preview", async () => {
    const dir = await tempDir();
    const text = "line of output\n".repeat(4_000); // 60,000 characters, ~12,000 tokens: under the cap
    const out = await limitOutput([{ type: "text", text }], false, {
      toolName: tool,
      maxOutputTokens: 25_000,
      resultsDir: join(dir, "mcp"),
    });
    const files = await readdir(join(dir, "mcp"));
    expect(files).toHaveLength(1);
    const path = join(dir, "mcp", files[0]!);
    expect(await readFile(path, "utf8")).toBe(text); // nothing lost
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(files[0]).toMatch(/^mcp__srv__dump-[0-9a-f-]{36}\.txt$/);
    const shown = String(out.result.content);
    expect(shown).toContain(`It is saved in full to ${path}`);
    expect(shown).toContain("(60000 characters");
    expect(shown.length).toBeLessThan(3_000);
    expect(out.result.isError).toBeUndefined();
  });

  it("R-M1: over MAX_MCP_OUTPUT_TOKENS but under 50,000 characters → saved too (the cap never drops a good result)", async () => {
    const dir = await tempDir();
    const out = await limitOutput([{ type: "text", text: "x".repeat(8_000) }], false, {
      toolName: tool,
      maxOutputTokens: 1_000,
      resultsDir: dir,
    });
    expect(String(out.result.content)).toContain("saved in full");
  });

  it("R-M1: over the cap and not savable (no dir, an error result, images) → Claude Code's error text", async () => {
    const big = { type: "text" as const, text: "x".repeat(8_000) }; // 2,200 tokens
    const cases = [
      { blocks: [big], isError: false, dir: undefined, tokens: 2_200 },
      { blocks: [big], isError: true, dir: await tempDir(), tokens: 2_200 },
      { blocks: [big, image], isError: false, dir: await tempDir(), tokens: 3_800 },
    ];
    for (const { blocks, isError, dir, tokens } of cases) {
      const out = await limitOutput(blocks, isError, {
        toolName: tool,
        maxOutputTokens: 1_000,
        resultsDir: dir,
      });
      expect(out.result).toEqual({
        isError: true,
        content: `MCP tool "${tool}" response (${tokens} tokens) exceeds maximum allowed tokens (1000). Ask for less: use the tool's pagination, filtering or limit parameters.`,
      });
    }
  });

  it("R-M1: a failed save is said in the error (the results dir is under a file)", async () => {
    const file = join(await tempDir(), "not-a-dir");
    await writeFile(file, "");
    const out = await limitOutput([{ type: "text", text: "y".repeat(8_000) }], false, {
      toolName: tool,
      maxOutputTokens: 1_000,
      resultsDir: join(file, "mcp"),
    });
    expect(out.result.isError).toBe(true);
    expect(String(out.result.content)).toContain("(saving it to a file failed: ENOTDIR)");
  });

  it("R-M1: over 10,000 tokens and under the cap → shown, with a warning", async () => {
    const text = "abcd ".repeat(9_500); // ~10,450 tokens, 47,500 characters
    const out = await limitOutput([{ type: "text", text }], false, {
      toolName: tool,
      maxOutputTokens: 25_000,
    });
    expect(out.result.content).toEqual([{ type: "text", text }]);
    expect(out.warningTokens).toBeGreaterThan(10_000);
  });

  it("R-M1: images stay image blocks next to the text", async () => {
    const out = await limitOutput([{ type: "text", text: "see:" }, image], false, {
      toolName: tool,
      maxOutputTokens: 25_000,
    });
    expect(out.result.content).toEqual([{ type: "text", text: "see:" }, image]);
  });
});

describe("R-M1: MCP content → tool_result blocks", () => {
  it("R-M1: text, image, audio, resource link, embedded text/image/binary resources, structuredContent", () => {
    expect(
      toResultBlocks({
        content: [
          { type: "text", text: "hello" },
          { type: "text", text: "" },
          { type: "image", data: TEST_PNG_BASE64, mimeType: "image/png" },
          { type: "image", data: "AAAA", mimeType: "image/tiff" },
          { type: "audio", data: "AAAA", mimeType: "audio/wav" },
          { type: "resource_link", uri: "file:///a.txt", name: "a.txt", mimeType: "text/plain" },
          { type: "resource", resource: { uri: "file:///b.txt", text: "bee" } },
          {
            type: "resource",
            resource: { uri: "file:///c.png", blob: TEST_PNG_BASE64, mimeType: "image/png" },
          },
          { type: "resource", resource: { uri: "file:///d.zip", blob: "AAAA", mimeType: "application/zip" } },
        ],
      }),
    ).toEqual([
      { type: "text", text: "hello" },
      image,
      {
        type: "text",
        text: "[image (image/tiff, 3 bytes) not shown: the API takes jpeg, png, gif and webp]",
      },
      { type: "text", text: "[audio (audio/wav, 3 bytes) not shown: audio is not supported]" },
      { type: "text", text: "[resource link: a.txt file:///a.txt (text/plain)]" },
      { type: "text", text: "[resource file:///b.txt]\nbee" },
      image,
      { type: "text", text: "[resource file:///d.zip (application/zip, 3 bytes) not shown]" },
    ]);
    expect(toResultBlocks({ content: [], structuredContent: { sum: 3 } })).toEqual([
      { type: "text", text: '{"sum":3}' },
    ]);
  });

  it("R-M1: an image's bytes decide its media_type (the API refuses a mismatch, and every later turn with it); data that is no image the API takes is a note", () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0x10, ...Buffer.from("JFIF")]).toString("base64");
    const gif = Buffer.from("GIF89a\x01\x00\x01\x00", "latin1").toString("base64");
    const webp = Buffer.from("RIFF\x24\x00\x00\x00WEBPVP8 ", "latin1").toString("base64");
    const png = (data: string) => ({ type: "image" as const, data, mimeType: "image/png" });
    const source = (block: ReturnType<typeof toResultBlocks>[number] | undefined) =>
      block?.type === "image" ? block.source : block;
    expect(toResultBlocks({ content: [png(jpeg), png(gif), png(webp)] }).map(source)).toEqual([
      { type: "base64", media_type: "image/jpeg", data: jpeg },
      { type: "base64", media_type: "image/gif", data: gif },
      { type: "base64", media_type: "image/webp", data: webp },
    ]);
    const text = Buffer.from("not an image at all").toString("base64");
    expect(toResultBlocks({ content: [png(text), png("")] })).toEqual([
      {
        type: "text",
        text: "[image (image/png, 19 bytes) not shown: its data is not a jpeg, png, gif or webp image]",
      },
      {
        type: "text",
        text: "[image (image/png, 0 bytes) not shown: its data is not a jpeg, png, gif or webp image]",
      },
    ]);
  });

  it("R-M1: an image over the API's 5 MB becomes a note, not a request the API refuses", () => {
    const blocks = toResultBlocks({
      content: [{ type: "image", data: "A".repeat(7_000_000), mimeType: "image/png" }],
    });
    expect(blocks).toEqual([
      { type: "text", text: "[image (image/png, 5250000 bytes) not shown: the API takes images up to 5 MB]" },
    ]);
  });
});
