/**
 * An image's width and height read from its header, for the four types the API takes (R-D2):
 * PNG's IHDR, GIF's logical screen, JPEG's first start-of-frame marker, WebP's VP8 / VP8L / VP8X
 * chunk. Undefined for bytes whose header does not say (the image check refuses those first).
 */
export interface ImageSize {
  readonly width: number;
  readonly height: number;
}

export function imageSize(bytes: Buffer, mediaType: string): ImageSize | undefined {
  try {
    switch (mediaType) {
      case "image/png":
        return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
      case "image/gif":
        return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
      case "image/jpeg":
        return jpegSize(bytes);
      case "image/webp":
        return webpSize(bytes);
      default:
        return undefined;
    }
  } catch {
    return undefined; // cut short: a header that ends early says nothing
  }
}

/** Walks the JPEG segments to the first SOFn (0xC0–0xCF except DHT 0xC4, JPG 0xC8, DAC 0xCC). */
function jpegSize(bytes: Buffer): ImageSize | undefined {
  let at = 2;
  while (at + 9 < bytes.length) {
    if (bytes[at] !== 0xff) return undefined;
    const marker = bytes[at + 1] ?? 0;
    if (marker === 0xff) {
      at += 1; // fill byte
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (marker >= 0xc0 && marker <= 0xcf && ![0xc4, 0xc8, 0xcc].includes(marker)) {
      return { height: bytes.readUInt16BE(at + 5), width: bytes.readUInt16BE(at + 7) };
    }
    at += 2 + length;
  }
  return undefined;
}

function webpSize(bytes: Buffer): ImageSize | undefined {
  const chunk = bytes.subarray(12, 16).toString("latin1");
  if (chunk === "VP8X") {
    const width = 1 + (bytes.readUIntLE(24, 3) & 0xffffff);
    const height = 1 + (bytes.readUIntLE(27, 3) & 0xffffff);
    return { width, height };
  }
  if (chunk === "VP8L") {
    const bits = bytes.readUInt32LE(21);
    return { width: 1 + (bits & 0x3fff), height: 1 + ((bits >> 14) & 0x3fff) };
  }
  if (chunk === "VP8 ") {
    return { width: bytes.readUInt16LE(26) & 0x3fff, height: bytes.readUInt16LE(28) & 0x3fff };
  }
  return undefined;
}
