import { type ApiError, invalidRequest } from "./api-error.js";
import { imageSize } from "./image-dimensions.js";
import type { ContentBlockParam, CountTokensRequest } from "./request-schema.js";
import { imageMediaTypeOf } from "./validate-image.js";

/** Vision page: an image over 8000 px on a side is over the limit; 2000 px with more than 20 images. */
const MAX_SIDE = 8000;
const MAX_SIDE_MANY = 2000;
const MANY_IMAGES = 20;

/** Enough of an image's base64 for its header (a JPEG's size marker may follow its metadata). */
const HEADER_BASE64_CHARS = 64 * 1024;

interface Placed {
  readonly block: Extract<ContentBlockParam, { type: "image" }>;
  readonly path: string;
}

/**
 * An image's `transformations.oversized_image` (R-D2): `"downsize"`, the default, lets the server
 * scale an image over the size limit down; `"error"` makes such an image a 400 with
 * `error.details.error_code` `image_dimensions_too_large`, the limit
 * (`max_side_length_pixels`) and the position of every image over it (`paths`, nested tool_result
 * images included), so the caller scales it deliberately. Sources: the SDK's
 * `ImageTransformationsParam` and `ImageDimensionsTooLargeErrorDetails` (the typed
 * `ImageDimensionsTooLargeError`; also the Ruby SDK's reference,
 * https://rubydoc.info/github/anthropics/anthropic-sdk-ruby/Anthropic/Models/ImageDimensionsTooLargeErrorDetails),
 * the limits from the vision page (https://platform.claude.com/docs/en/build-with-claude/vision).
 * The default (`"downsize"`) is the SDK's doc comment's: "`"downsize"` (the default) scales the
 * image down to fit". A URL source is measured by its bytes in `urlImages` (the simulator reaches
 * no network: a scenario's `web.images` supplies them); a URL not there is not measured. The
 * message's wording is UNCONFIRMED.
 */
export function checkImageDimensions(
  body: CountTokensRequest,
  urlImages: Readonly<Record<string, string>> = {},
): ApiError | null {
  const images = placedImages(body);
  const limit = images.length > MANY_IMAGES ? MAX_SIDE_MANY : MAX_SIDE;
  const over = images.filter(({ block }) => {
    if (block.transformations?.oversized_image !== "error") return false;
    const size = sizeOf(block.source, urlImages);
    return size !== undefined && Math.max(size.width, size.height) > limit;
  });
  if (over.length === 0) return null;
  const paths = over.map(({ path }) => path);
  return invalidRequest(
    `${paths.join(", ")}: image dimensions exceed max allowed size: ${limit} pixels on the longest side; scale each image so that neither side exceeds ${limit} pixels, or remove it`,
    "image_dimensions_too_large",
    { max_side_length_pixels: limit, paths },
  );
}

/** The pixel size of an inline image, or of a URL image whose bytes the fixtures hold. */
function sizeOf(source: Placed["block"]["source"], urlImages: Readonly<Record<string, string>>) {
  if (source.type === "base64") {
    return imageSize(Buffer.from(source.data.slice(0, HEADER_BASE64_CHARS), "base64"), source.media_type);
  }
  if (source.type !== "url") return undefined;
  const data = Object.hasOwn(urlImages, source.url) ? urlImages[source.url] : undefined;
  if (data === undefined) return undefined;
  const head = Buffer.from(data.slice(0, HEADER_BASE64_CHARS), "base64");
  const mediaType = imageMediaTypeOf(head);
  return mediaType === undefined ? undefined : imageSize(head, mediaType);
}

/** Every image of the messages in order, with its position (`messages.0.content.1.content.0`). */
function placedImages(body: CountTokensRequest): Placed[] {
  const found: Placed[] = [];
  const visit = (block: ContentBlockParam, path: string): void => {
    if (block.type === "image") found.push({ block, path });
    if (block.type === "tool_result" && Array.isArray(block.content)) {
      for (const [i, inner] of block.content.entries()) visit(inner, `${path}.content.${i}`);
    }
  };
  for (const [m, message] of body.messages.entries()) {
    if (typeof message.content === "string") continue;
    for (const [b, block] of message.content.entries()) visit(block, `messages.${m}.content.${b}`);
  }
  return found;
}
