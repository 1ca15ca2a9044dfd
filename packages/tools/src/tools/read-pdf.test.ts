import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { deflateSync } from "node:zlib";
import Anthropic from "@anthropic-ai/sdk";
import { createUserMessage, query } from "@forkloop/loop-core";
import { collect } from "@forkloop/loop-core/testing";
import { startSimulator } from "@forkloop/sim";
import { sequenceBrain } from "@forkloop/sim/testing";
import { PDFDocument, StandardFonts } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { PDF_MAX_SEND_BYTES } from "../pdf/pdf-pages.js";
import { pdfForReadOffThread } from "../pdf/pdf-thread.js";
import { callTool, resultText, useTempWorkspace } from "../testing/index.js";
import { readTool } from "./read.js";

const ws = useTempWorkspace();

/** A real PDF of `pages` pages, each saying its number (and `padding` bytes of text, to make it large). */
async function makePdf(name: string, pages: number, options: { encrypt?: boolean } = {}): Promise<string> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let n = 1; n <= pages; n++) doc.addPage().drawText(`Page number ${n}`, { x: 50, y: 700, font });
  if (options.encrypt === true) {
    // An /Encrypt entry in the trailer is what marks a PDF encrypted (pdf-lib refuses to load it).
    doc.context.trailerInfo.Encrypt = doc.context.register(doc.context.obj({ Filter: "Standard" }));
  }
  const bytes = Buffer.from(await doc.save({ useObjectStreams: false }));
  const path = join(ws.root, name);
  writeFileSync(path, bytes);
  return path;
}

type Block = { type: string; text?: string; source?: { type: string; media_type: string; data: string } };
const blocksOf = (result: { content: unknown }) => result.content as Block[];

async function pagesIn(data: string): Promise<string[]> {
  const doc = await PDFDocument.load(Buffer.from(data, "base64"));
  return doc.getPages().map((page) => String(page.getSize().width));
}

describe("Read of PDFs (R-T7)", () => {
  it('R-T7: pages "2-4" sends a base64 PDF document of exactly those pages, with a line naming them', async () => {
    await makePdf("report.pdf", 12);
    const result = await callTool(readTool, { file_path: "report.pdf", pages: "2-4" }, ws.context());
    expect(result.isError).toBeUndefined();
    const [line, document] = blocksOf(result);
    expect(line?.text).toContain("pages 2-4 of 12");
    expect(document?.type).toBe("document");
    expect(document?.source?.media_type).toBe("application/pdf");
    const sent = Buffer.from(document?.source?.data ?? "", "base64").toString("latin1");
    expect(sent.startsWith("%PDF-")).toBe(true);
    expect(await pagesIn(document?.source?.data ?? "")).toHaveLength(3);
    // Control: the file itself has all twelve.
    expect(
      (
        await PDFDocument.load(
          Buffer.from(await import("node:fs").then((fs) => fs.readFileSync(join(ws.root, "report.pdf")))),
        )
      ).getPageCount(),
    ).toBe(12);
  });

  it("R-T7: a short PDF without pages goes whole, as its own bytes; a long one asks for pages", async () => {
    const short = await makePdf("short.pdf", 3);
    const whole = await callTool(readTool, { file_path: "short.pdf" }, ws.context());
    const data = blocksOf(whole)[1]?.source?.data ?? "";
    expect(
      Buffer.from(data, "base64").equals(await import("node:fs").then((fs) => fs.readFileSync(short))),
    ).toBe(true);
    await makePdf("long.pdf", 11);
    const refused = await callTool(readTool, { file_path: "long.pdf" }, ws.context());
    expect(refused.isError).toBe(true);
    expect(resultText(refused)).toMatch(/11 pages, more than the 10 .* pages: "1-11"/);
  });

  it("R-T7: bad ranges are tool errors naming the fix", async () => {
    await makePdf("five.pdf", 5);
    const cases: [string, RegExp][] = [
      ["abc", /not a page range\. Write pages as one page \("3"\) or a range \("1-5"\)/],
      ["0", /numbered from 1/],
      ["4-2", /ends before it starts/],
      ["1-21", /21 pages, more than the 20 .*"1-20"/],
      ["7-9", /has 5 pages/],
    ];
    for (const [pages, message] of cases) {
      const result = await callTool(readTool, { file_path: "five.pdf", pages }, ws.context());
      expect(result.isError, pages).toBe(true);
      expect(resultText(result), pages).toMatch(message);
    }
    // A range reaching past the end is cut to the last page.
    const tail = await callTool(readTool, { file_path: "five.pdf", pages: "4-9" }, ws.context());
    expect(blocksOf(tail)[0]?.text).toContain("pages 4-5 of 5");
  });

  it("R-T7: pages on a file that is not a PDF, an encrypted PDF and a broken one are tool errors", async () => {
    writeFileSync(join(ws.root, "a.txt"), "text\n");
    const notPdf = await callTool(readTool, { file_path: "a.txt", pages: "1" }, ws.context());
    expect(resultText(notPdf)).toMatch(/pages applies to PDF files only/);
    await makePdf("locked.pdf", 2, { encrypt: true });
    const locked = await callTool(readTool, { file_path: "locked.pdf" }, ws.context());
    expect(resultText(locked)).toMatch(/encrypted PDF.*qpdf --decrypt/);
    writeFileSync(join(ws.root, "broken.pdf"), "%PDF-1.7\nnot really a pdf at all");
    const broken = await callTool(readTool, { file_path: "broken.pdf" }, ws.context());
    expect(broken.isError).toBe(true);
    expect(resultText(broken)).toMatch(/cannot be read as one/);
  });

  it("R-T7: a PDF whose pages come to more than the send limit is refused, naming the limit", async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage();
    // Incompressible bytes in a stream make the one page larger than the limit.
    const noise = Buffer.alloc(PDF_MAX_SEND_BYTES + 1024);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    const stream = doc.context.stream(noise);
    page.node.set(doc.context.obj("Noise") as never, doc.context.register(stream));
    writeFileSync(join(ws.root, "huge.pdf"), await doc.save());
    const result = await callTool(readTool, { file_path: "huge.pdf", pages: "1" }, ws.context());
    expect(result.isError).toBe(true);
    expect(resultText(result)).toMatch(new RegExp(`more than the ${PDF_MAX_SEND_BYTES} one Read sends`));
  });

  it("R-T7: through the loop and the simulator over HTTP, the document block reaches the API in the tool_result and is accepted", async () => {
    await makePdf("guide.pdf", 6);
    const brain = sequenceBrain([
      { content: [{ type: "tool_use", name: "Read", input: { file_path: "guide.pdf", pages: "2-3" } }] },
      { content: [{ type: "text", text: "read it" }] },
    ]);
    const sim = await startSimulator({ brain });
    try {
      const client = new Anthropic({ apiKey: "test-key", baseURL: sim.url, maxRetries: 0 });
      const { terminal } = await collect(
        query({
          messages: [createUserMessage("Read pages 2-3 of guide.pdf.")],
          systemPrompt: "You are a test agent.",
          toolUseContext: {
            ...ws.context({ tools: [readTool as never] }),
            options: { model: "claude-sonnet-4-6", permissionMode: "default" },
          },
          querySource: "sdk",
          client,
          maxTurns: 3,
        }),
      );
      expect(terminal.reason).toBe("completed");
      const second = sim.requests().filter((record) => record.path === "/v1/messages")[1];
      expect(second?.status).toBe(200);
      const toolResult = JSON.parse(second?.rawBody ?? "{}").messages.at(-1).content[0];
      expect(toolResult.type).toBe("tool_result");
      expect(toolResult.content[1]).toMatchObject({
        type: "document",
        source: { type: "base64", media_type: "application/pdf" },
      });
      expect(await pagesIn(toolResult.content[1].source.data)).toHaveLength(2);
    } finally {
      await sim.close();
    }
  });
});

/**
 * A PDF whose one compressed object stream inflates to `inflated` bytes of spaces: a file of a few
 * hundred KiB that pdf-lib inflates whole, synchronously, when it loads the file.
 */
function inflatingPdf(inflated: number): Buffer {
  const stream = deflateSync(Buffer.alloc(inflated, 0x20), { level: 9 });
  const parts: Buffer[] = [Buffer.from("%PDF-1.5\n", "latin1")];
  const offsets: number[] = [];
  let length = parts[0]?.length ?? 0;
  const add = (part: Buffer) => {
    offsets.push(length);
    parts.push(part);
    length += part.length;
  };
  add(Buffer.from("1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n", "latin1"));
  add(Buffer.from("2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n", "latin1"));
  add(Buffer.from("3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>\nendobj\n", "latin1"));
  add(
    Buffer.concat([
      Buffer.from(
        `4 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${stream.length} >>\nstream\n`,
        "latin1",
      ),
      stream,
      Buffer.from("\nendstream\nendobj\n", "latin1"),
    ]),
  );
  const table = offsets.map((offset) => `${String(offset).padStart(10, "0")} 00000 n \n`).join("");
  parts.push(
    Buffer.from(
      `xref\n0 5\n0000000000 65535 f \n${table}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${length}\n%%EOF\n`,
      "latin1",
    ),
  );
  return Buffer.concat(parts);
}

/** 256 MiB inflated from a file of about 250 KiB: seconds of pdf-lib's work, made once. */
let bombFile: Buffer | undefined;
const bomb = () => {
  bombFile ??= inflatingPdf(256 * 1024 * 1024);
  return bombFile;
};

describe("Read of a hostile PDF (R-T7, R-S12)", () => {
  it("R-S12: a PDF whose object stream inflates to 256 MiB is parsed off the caller's thread: the deadline ends it, and the caller's timers ran meanwhile", async () => {
    expect(bomb().length).toBeLessThan(1024 * 1024);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 20);
    try {
      const result = await pdfForReadOffThread(bomb(), "bomb.pdf", undefined, { deadlineMs: 200 });
      expect(result.ok).toBe(false);
      expect(result.ok ? "" : result.error).toContain("did not parse within 0.2 s");
      // The caller's thread was free while the parse ran: its timer fired.
      expect(ticks).toBeGreaterThan(0);
    } finally {
      clearInterval(ticker);
    }
  });

  it("R-S12: a stopped Read ends its PDF parse at once", async () => {
    const stop = new AbortController();
    const pending = pdfForReadOffThread(bomb(), "bomb.pdf", undefined, {
      signal: stop.signal,
    });
    setTimeout(() => stop.abort(), 200);
    await expect(pending).rejects.toThrow("Read was stopped");
  });

  it("control: an ordinary PDF parses on the thread as before", async () => {
    await makePdf("plain.pdf", 3);
    const result = await callTool(readTool, { file_path: "plain.pdf" }, ws.context());
    expect(result.isError).toBeUndefined();
    expect(blocksOf(result)[0]?.text).toContain("pages 1-3 of 3");
  });
});
