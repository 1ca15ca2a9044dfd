/** The Messages API's per-image limit (decoded bytes); larger images are refused before sending. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** The image type from the file's magic bytes (not its name), or undefined for anything else. */
export function detectImage(bytes: Uint8Array): ImageMediaType | undefined {
  const starts = (...signature: number[]): boolean => signature.every((byte, index) => bytes[index] === byte);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38)) return "image/gif";
  const riff = starts(0x52, 0x49, 0x46, 0x46);
  const webp = bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50;
  if (riff && webp) return "image/webp";
  return undefined;
}
