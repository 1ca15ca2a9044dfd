import Anthropic, { toFile } from "@anthropic-ai/sdk";
import { afterEach, describe, expect, it } from "vitest";
import { startSimulator } from "./server.js";
import type { Simulator } from "./types.js";

// The Files API through the official SDK (R-D4): Files guide
// https://platform.claude.com/docs/en/build-with-claude/files and reference
// https://platform.claude.com/docs/en/api/files/upload (…/list, …/download, …/delete).
let sim: Simulator | undefined;
afterEach(async () => {
  await sim?.close();
  sim = undefined;
});

const MODEL = "claude-sonnet-4-6";
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex",
);
const PDF = Buffer.from("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n");

async function start(options: Parameters<typeof startSimulator>[0] = {}) {
  sim = await startSimulator({ brain: () => ({ content: [{ type: "text", text: "ok" }] }), ...options });
  return new Anthropic({ apiKey: "key-a", baseURL: sim.url, maxRetries: 0 });
}

const textFile = (text: string, name = "notes.txt") =>
  toFile(Buffer.from(text), name, { type: "text/plain" });

function documentFrom(fileId: string) {
  return { type: "document" as const, source: { type: "file" as const, file_id: fileId } };
}

describe("R-D4: the Files API through the official SDK", () => {
  it("R-D4: upload, retrieve, list (paged, newest first, by ids), delete — no beta header needed", async () => {
    const client = await start();
    const uploaded = await client.files.upload({ file: await textFile("hello files", "dir/sub/notes.txt") });
    expect(uploaded).toMatchObject({
      type: "file",
      filename: "notes.txt", // only the final path component is kept
      mime_type: "text/plain",
      size_bytes: 11,
      downloadable: false,
      expires_at: null,
    });
    expect(uploaded.id).toMatch(/^file_/);
    expect(Number.isNaN(Date.parse(uploaded.created_at))).toBe(false);
    expect(await client.files.retrieveMetadata(uploaded.id)).toEqual(uploaded);

    const more = [];
    for (let i = 0; i < 4; i++) more.push(await client.files.upload({ file: await textFile(`file ${i}`) }));
    const firstPage = await client.files.list({ limit: 2 });
    expect(firstPage.data.map((f) => f.id)).toEqual([more[3]?.id, more[2]?.id]);
    expect(firstPage.next_page).toMatch(/^page_/);
    const all: string[] = [];
    for await (const file of client.files.list({ limit: 2 })) all.push(file.id);
    expect(all).toEqual([...more.map((f) => f.id).reverse(), uploaded.id]);
    const byIds = await client.files.list({ ids: [uploaded.id, "file_unknown"] });
    expect(byIds.data.map((f) => f.id)).toEqual([uploaded.id]);
    expect(byIds.next_page).toBeNull();

    expect(await client.files.delete(uploaded.id)).toEqual({ id: uploaded.id, type: "file_deleted" });
    await expect(client.files.retrieveMetadata(uploaded.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    // The beta resource reaches the same endpoints with the old beta header.
    const beta = await client.beta.files.list({ betas: ["files-api-2025-04-14"] });
    expect(beta.data).toHaveLength(4);
  });

  it("R-D4: files are the uploading key's: another key sees none of them", async () => {
    const client = await start();
    const mine = await client.files.upload({ file: await textFile("mine") });
    const other = new Anthropic({ apiKey: "key-b", baseURL: sim?.url ?? "", maxRetries: 0 });
    expect((await other.files.list()).data).toEqual([]);
    await expect(other.files.retrieveMetadata(mine.id)).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    await expect(
      other.messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [{ role: "user", content: [documentFrom(mine.id), { type: "text", text: "read it" }] }],
      }),
    ).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });

  it("R-D4: an uploaded file cannot be downloaded (file_not_downloadable); an expired one's content is gone (file_expired)", async () => {
    const clock = { now: 1_000_000 };
    const client = await start({ clock: () => clock.now });
    const file = await client.files.upload({ file: await textFile("temporary"), expires_in_seconds: 3600 });
    expect(Date.parse(file.expires_at ?? "") - Date.parse(file.created_at)).toBe(3_600_000);
    const refused = await client.files.download(file.id).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(Anthropic.BadRequestError);
    expect((refused as InstanceType<typeof Anthropic.APIError>).errorCode).toBe("file_not_downloadable");
    const ask = () =>
      client.messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [{ role: "user", content: [documentFrom(file.id), { type: "text", text: "read it" }] }],
      });
    await expect(ask()).resolves.toMatchObject({ type: "message" });
    clock.now += 3_600_000;
    const expired = await ask().catch((e: unknown) => e);
    expect(expired).toBeInstanceOf(Anthropic.NotFoundError);
    expect((expired as InstanceType<typeof Anthropic.APIError>).errorCode).toBe("file_expired");
    // Its metadata stays (expires_at says when its bytes went).
    expect((await client.files.retrieveMetadata(file.id)).expires_at).toBe(file.expires_at);
  });

  it("R-D4: expires_in_seconds outside one hour … ninety days and a full storage quota are 400s", async () => {
    const client = await start({ files: { storageLimitBytes: 20 } });
    await expect(client.files.upload({ file: await textFile("x"), expires_in_seconds: 60 })).rejects.toThrow(
      "expires_in_seconds: Input should be greater than or equal to 3600",
    );
    await expect(
      client.files.upload({ file: await textFile("x"), expires_in_seconds: 7_776_001 }),
    ).rejects.toThrow("expires_in_seconds: Input should be less than or equal to 7776000");
    await client.files.upload({ file: await textFile("0123456789") });
    const full = await client.files.upload({ file: await textFile("0123456789a") }).catch((e: unknown) => e);
    expect(full).toBeInstanceOf(Anthropic.BadRequestError);
    expect((full as InstanceType<typeof Anthropic.APIError>).errorCode).toBe("storage_quota_exceeded");
  });

  it("R-D4: the stored mime_type comes from the bytes (PDF, PNG), else the part's type; a nameless part is unnamed.<ext>", async () => {
    const client = await start();
    const pdf = await client.files.upload({
      file: await toFile(PDF, "report", { type: "application/octet-stream" }),
    });
    expect(pdf).toMatchObject({ filename: "report", mime_type: "application/pdf" });
    const png = await client.files.upload({
      file: await toFile(PNG, "", { type: "application/octet-stream" }),
    });
    expect(png).toMatchObject({ filename: "unnamed.png", mime_type: "image/png" });
  });
});

describe("R-D4: file_id sources in Messages requests", () => {
  it("R-D4: a text file in a document block counts and reads as its text; a PDF as a PDF; an image file in an image block", async () => {
    const client = await start();
    const text = "The simulator reads uploaded files. ".repeat(20);
    const file = await client.files.upload({ file: await textFile(text) });
    const inline = await client.messages.countTokens({
      model: MODEL,
      messages: [
        {
          role: "user",
          content: [
            { type: "document", source: { type: "text", media_type: "text/plain", data: text } },
            { type: "text", text: "summarise" },
          ],
        },
      ],
    });
    const byFile = await client.messages.countTokens({
      model: MODEL,
      messages: [{ role: "user", content: [documentFrom(file.id), { type: "text", text: "summarise" }] }],
    });
    expect(byFile.input_tokens).toBe(inline.input_tokens);
    const pdf = await client.files.upload({ file: await toFile(PDF, "a.pdf", { type: "application/pdf" }) });
    const png = await client.files.upload({ file: await toFile(PNG, "a.png", { type: "image/png" }) });
    const reply = await client.messages.create({
      model: MODEL,
      max_tokens: 10,
      messages: [
        {
          role: "user",
          content: [
            documentFrom(pdf.id),
            { type: "image", source: { type: "file", file_id: png.id } },
            { type: "text", text: "describe both" },
          ],
        },
      ],
    });
    expect(reply.stop_reason).toBe("end_turn");
  });

  it("R-D4: a file that does not fit its block is a 400; an unknown file_id a 404", async () => {
    const client = await start();
    const png = await client.files.upload({ file: await toFile(PNG, "a.png", { type: "image/png" }) });
    const text = await client.files.upload({ file: await textFile("words") });
    const send = (block: Anthropic.ContentBlockParam) =>
      client.messages.create({
        model: MODEL,
        max_tokens: 10,
        messages: [{ role: "user", content: [block, { type: "text", text: "go" }] }],
      });
    await expect(send(documentFrom(png.id))).rejects.toThrow(
      `messages.0.content.0.document.source.file: The file ${png.id} has type image/png, which cannot be used in a document block`,
    );
    await expect(send({ type: "image", source: { type: "file", file_id: text.id } })).rejects.toThrow(
      "which cannot be used in an image block",
    );
    await expect(send(documentFrom("file_missing"))).rejects.toBeInstanceOf(Anthropic.NotFoundError);
  });
});
