import { createRequire } from "node:module";
import type * as PdfLib from "pdf-lib";

/** Pages one Read may send (Claude Code's limit on `pages`). */
export const PDF_MAX_PAGES_PER_READ = 20;
/** A PDF longer than this needs `pages`: a whole long document would fill the context at once. */
export const PDF_WHOLE_MAX_PAGES = 10;
/**
 * Bytes of PDF one Read sends. The API takes requests up to 32 MB and base64 adds a third: 20 MiB
 * leaves room for the rest of the conversation.
 */
export const PDF_MAX_SEND_BYTES = 20 * 1024 * 1024;

/** A PDF by its magic bytes (`%PDF-`), never by its name. */
export function isPdf(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.subarray(0, 5)).toString("latin1") === "%PDF-";
}

export interface PageRange {
  readonly first: number;
  readonly last: number;
}

/** `"3"`, `"1-5"`, `"10-20"` → the 1-based inclusive range; a string says what is wrong and how to write it. */
function parsePageRange(spec: string): PageRange | string {
  const match = /^\s*(\d{1,6})\s*(?:-\s*(\d{1,6})\s*)?$/.exec(spec);
  const usage = `Write pages as one page ("3") or a range ("1-5"), at most ${PDF_MAX_PAGES_PER_READ} pages.`;
  if (match?.[1] === undefined) return `pages "${spec}" is not a page range. ${usage}`;
  const first = Number(match[1]);
  const last = match[2] === undefined ? first : Number(match[2]);
  if (first < 1) return `pages "${spec}": pages are numbered from 1. ${usage}`;
  if (last < first) return `pages "${spec}": the range ends before it starts. ${usage}`;
  if (last - first + 1 > PDF_MAX_PAGES_PER_READ) {
    return `pages "${spec}" is ${last - first + 1} pages, more than the ${PDF_MAX_PAGES_PER_READ} one Read sends. Read it in parts (e.g. "${first}-${first + PDF_MAX_PAGES_PER_READ - 1}").`;
  }
  return { first, last };
}

export type PdfForRead =
  | {
      readonly ok: true;
      readonly data: Buffer;
      readonly first: number;
      readonly last: number;
      readonly total: number;
    }
  | { readonly ok: false; readonly error: string };

let pdfLib: typeof PdfLib | undefined;

/** pdf-lib loads at the first PDF read (R-V2: importing the SDK does not load it). */
function loadPdfLib(): typeof PdfLib {
  pdfLib ??= createRequire(import.meta.url)("pdf-lib") as typeof PdfLib;
  return pdfLib;
}

/**
 * The PDF a Read sends (R-T7): the file as it is when it is short and no range is asked, else a
 * new PDF of the asked pages copied out of it (pdf-lib; the file is only read). Refuses what the
 * API would: an encrypted or unreadable file, a range past the end, more than the byte limit.
 */
export async function pdfForRead(
  bytes: Buffer,
  path: string,
  pages: string | undefined,
): Promise<PdfForRead> {
  const range = pages === undefined ? undefined : parsePageRange(pages);
  if (typeof range === "string") return { ok: false, error: range };
  const { PDFDocument } = loadPdfLib();
  let source: PdfLib.PDFDocument;
  try {
    // Loaded despite encryption only to say so: its pages are not copied out.
    source = await PDFDocument.load(bytes, { updateMetadata: false, ignoreEncryption: true });
  } catch (error) {
    return {
      ok: false,
      error: `${path} starts like a PDF but cannot be read as one (${(error as Error).message}).`,
    };
  }
  if (source.isEncrypted) {
    return {
      ok: false,
      error: `${path} is an encrypted PDF; Read cannot take pages out of it. Decrypt a copy (e.g. qpdf --decrypt) and Read that.`,
    };
  }
  try {
    return await pagesOf(source, bytes, path, pages, range);
  } catch (error) {
    // pdf-lib loads leniently; a damaged page tree fails only when walked.
    return {
      ok: false,
      error: `${path} starts like a PDF but cannot be read as one (${(error as Error).message}).`,
    };
  }
}

async function pagesOf(
  source: PdfLib.PDFDocument,
  bytes: Buffer,
  path: string,
  pages: string | undefined,
  range: PageRange | undefined,
): Promise<PdfForRead> {
  const { PDFDocument } = loadPdfLib();
  const total = source.getPageCount();
  if (range === undefined) {
    if (total > PDF_WHOLE_MAX_PAGES) {
      return {
        ok: false,
        error: `${path} is a PDF of ${total} pages, more than the ${PDF_WHOLE_MAX_PAGES} Read sends whole. Give pages, e.g. pages: "1-${Math.min(total, PDF_MAX_PAGES_PER_READ)}".`,
      };
    }
    return sized({ ok: true, data: bytes, first: 1, last: total, total }, path);
  }
  if (range.first > total) {
    return { ok: false, error: `pages "${pages}": ${path} has ${total} page${total === 1 ? "" : "s"}.` };
  }
  const last = Math.min(range.last, total);
  const out = await PDFDocument.create({ updateMetadata: false });
  const indices = Array.from({ length: last - range.first + 1 }, (_, i) => range.first - 1 + i);
  for (const page of await out.copyPages(source, indices)) out.addPage(page);
  const data = Buffer.from(await out.save());
  return sized({ ok: true, data, first: range.first, last, total }, path);
}

function sized(pdf: PdfForRead & { ok: true }, path: string): PdfForRead {
  if (pdf.data.length <= PDF_MAX_SEND_BYTES) return pdf;
  const what = pdf.first === 1 && pdf.last === pdf.total ? "the whole PDF" : `pages ${pdf.first}-${pdf.last}`;
  return {
    ok: false,
    error: `${what} of ${path} come to ${pdf.data.length} bytes, more than the ${PDF_MAX_SEND_BYTES} one Read sends. Ask for fewer pages.`,
  };
}
