import { imageMediaTypeOf } from "./validate-image.js";

/** Extensions of the text types the Files guide lists for documents and the code execution tool. */
const TEXT_TYPES: Readonly<Record<string, string>> = {
  txt: "text/plain",
  md: "text/markdown",
  csv: "text/csv",
  json: "application/json",
  html: "text/html",
  xml: "application/xml",
};

/**
 * The `mime_type` an uploaded file is stored with. The API decides it (upload reference: "the
 * file's stored `mime_type`"); how is UNCONFIRMED, so the simulator trusts the bytes first (PDF
 * and the four image types by their magic bytes), then the part's declared type, then the
 * extension, then whether the bytes are UTF-8 text.
 */
export function storedMimeType(bytes: Buffer, declared: string, filename: string): string {
  const head = bytes.subarray(0, 16);
  if (head.subarray(0, 5).toString("latin1") === "%PDF-") return "application/pdf";
  const image = imageMediaTypeOf(head);
  if (image) return image;
  const type = declared.split(";")[0]?.trim().toLowerCase() ?? "";
  if (type !== "" && type !== "application/octet-stream") return type;
  const byExtension = TEXT_TYPES[filename.split(".").at(-1)?.toLowerCase() ?? ""];
  if (byExtension) return byExtension;
  return isUtf8Text(bytes) ? "text/plain" : "application/octet-stream";
}

/** An extension for `unnamed` files (upload reference: "plus the extension for … `mime_type`"). */
export function extensionFor(mimeType: string): string {
  if (mimeType === "application/pdf") return ".pdf";
  if (mimeType.startsWith("image/")) return `.${mimeType.slice("image/".length).replace("jpeg", "jpg")}`;
  const text = Object.entries(TEXT_TYPES).find(([, type]) => type === mimeType);
  return text ? `.${text[0]}` : "";
}

function isUtf8Text(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}
