import { bad, base, type Case, ok, PAGE, user } from "./case.js";

/** A PNG whose header says `width`×`height` (signature and IHDR; the pixels are not needed). */
function png(width: number, height: number): string {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(13);
  const bytes = Buffer.concat([
    Buffer.from("89504e470d0a1a0a", "hex"),
    length,
    Buffer.from("IHDR"),
    ihdr,
    Buffer.alloc(4),
  ]);
  return bytes.toString("base64");
}

const image = (width: number, height: number, transformations?: unknown) => ({
  type: "image",
  source: { type: "base64", media_type: "image/png", data: png(width, height) },
  ...(transformations === undefined ? {} : { transformations }),
});
/** Images URL sources name, as a scenario's `web.images` supplies them (the simulator fetches nothing). */
export const URL_IMAGES: Readonly<Record<string, string>> = {
  "https://images.example/wide.png": png(9000, 100),
  "https://images.example/photo.png": png(4000, 3000),
  "https://images.example/2100.png": png(2100, 50),
};
const urlImage = (url: string, transformations?: unknown) => ({
  type: "image",
  source: { type: "url", url },
  ...(transformations === undefined ? {} : { transformations }),
});
const withImages = (...blocks: unknown[]) =>
  base("claude-sonnet-4-6", {
    messages: [{ role: "user", content: [...blocks, { type: "text", text: "Describe." }] }],
  });
const ERROR = { oversized_image: "error" };

const tool = (name: string, deferred?: boolean) => ({
  name,
  description: `the ${name} tool`,
  input_schema: { type: "object", properties: { query: { type: "string" } } },
  ...(deferred === undefined ? {} : { defer_loading: deferred }),
});
/** A custom tool search call answered with tool_reference blocks naming `names`. */
const searched = (names: readonly string[], tools: readonly unknown[]) =>
  base("claude-sonnet-4-6", {
    tools,
    messages: [
      user("Find a weather tool."),
      {
        role: "assistant",
        content: [
          { type: "tool_use", id: "toolu_search1", name: "search_tools", input: { query: "weather" } },
        ],
      },
      {
        role: "user",
        content: [
          {
            type: "tool_result",
            tool_use_id: "toolu_search1",
            content: names.map((name) => ({ type: "tool_reference", tool_name: name })),
          },
        ],
      },
    ],
  });

/**
 * Image `transformations` (the SDK's ImageTransformationsParam; limits from the vision page) and
 * tool_reference blocks (tool search tool page) — R-D2.
 */
export const IMAGE_AND_REFERENCE_CASES: Case[] = [
  {
    page: PAGE.vision,
    title:
      "oversized_image error on an image over 8000 px → 400 image_dimensions_too_large with the limit and its path",
    body: withImages(image(9000, 100, ERROR)),
    expect: {
      ...bad(/max allowed size: 8000 pixels/, "image_dimensions_too_large"),
      details: { max_side_length_pixels: 8000, paths: ["messages.0.content.0"] },
    },
  },
  {
    page: PAGE.vision,
    title: "oversized_image downsize on an image over 8000 px → accepted (scaled down)",
    body: withImages(image(9000, 100, { oversized_image: "downsize" })),
    expect: ok,
  },
  {
    page: PAGE.vision,
    title: "an image over 8000 px without transformations → accepted (downsize is the default)",
    body: withImages(image(9000, 100)),
    expect: ok,
  },
  {
    page: PAGE.vision,
    title: "oversized_image error on an image within the limit → accepted",
    body: withImages(image(4000, 3000, ERROR)),
    expect: ok,
  },
  {
    page: PAGE.vision,
    title: "empty transformations → accepted (as if omitted)",
    body: withImages(image(100, 100, {})),
    expect: ok,
  },
  {
    page: PAGE.vision,
    title: "more than 20 images: the limit is 2000 px, and only the images asking for an error are named",
    body: withImages(...Array.from({ length: 20 }, () => image(2100, 50)), image(2100, 50, ERROR)),
    expect: {
      ...bad(/max allowed size: 2000 pixels/, "image_dimensions_too_large"),
      details: { max_side_length_pixels: 2000, paths: ["messages.0.content.20"] },
    },
  },
  {
    page: PAGE.vision,
    title:
      "oversized_image error on a URL image over 8000 px → 400 image_dimensions_too_large, measured as if inline",
    body: withImages(image(100, 100), urlImage("https://images.example/wide.png", ERROR)),
    expect: {
      ...bad(/max allowed size: 8000 pixels/, "image_dimensions_too_large"),
      details: { max_side_length_pixels: 8000, paths: ["messages.0.content.1"] },
    },
  },
  {
    page: PAGE.vision,
    title: "a URL image over 8000 px without transformations → accepted (downsize is the default)",
    body: withImages(urlImage("https://images.example/wide.png")),
    expect: ok,
  },
  {
    page: PAGE.vision,
    title: "oversized_image error on a URL image within the limit → accepted",
    body: withImages(urlImage("https://images.example/photo.png", ERROR)),
    expect: ok,
  },
  {
    page: PAGE.vision,
    title:
      "more than 20 images, one a URL image over 2000 px asking for an error → the 2000 px limit names it",
    body: withImages(
      ...Array.from({ length: 20 }, () => image(100, 100)),
      urlImage("https://images.example/2100.png", ERROR),
    ),
    expect: {
      ...bad(/max allowed size: 2000 pixels/, "image_dimensions_too_large"),
      details: { max_side_length_pixels: 2000, paths: ["messages.0.content.20"] },
    },
  },
  {
    page: PAGE.vision,
    title: "oversized_image error on an image inside a tool_result → its nested path",
    body: base("claude-sonnet-4-6", {
      tools: [tool("shot")],
      messages: [
        user("Take a screenshot."),
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_shot1", name: "shot", input: {} }] },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "toolu_shot1", content: [image(100, 8001, ERROR)] }],
        },
      ],
    }),
    expect: {
      ...bad(undefined, "image_dimensions_too_large"),
      details: { paths: ["messages.2.content.0.content.0"] },
    },
  },
  {
    page: PAGE.vision,
    title: "an unknown transformations key → 400",
    body: withImages(image(100, 100, { rotate: 90 })),
    expect: bad("messages.0.content.0.image.transformations.rotate: Extra inputs are not permitted"),
  },
  {
    page: PAGE.vision,
    title: "oversized_image other than downsize or error → 400",
    body: withImages(image(100, 100, { oversized_image: "crop" })),
    expect: bad(/transformations\.oversized_image/),
  },
  {
    page: PAGE.toolSearch,
    title: "a tool_reference naming a tool not in tools → 400 with the API's wording",
    body: searched(["get_weather"], [tool("search_tools"), tool("get_time", true)]),
    expect: bad("Tool reference 'get_weather' not found in available tools"),
  },
  {
    page: PAGE.toolSearch,
    title: "a tool_reference naming a deferred tool of the request → accepted",
    body: searched(["get_weather"], [tool("search_tools"), tool("get_weather", true)]),
    expect: ok,
  },
  {
    page: PAGE.toolSearch,
    title: "a tool_reference as a message's own block → 400 (only inside a tool_result)",
    body: base("claude-sonnet-4-6", {
      tools: [tool("get_weather")],
      messages: [{ role: "user", content: [{ type: "tool_reference", tool_name: "get_weather" }] }],
    }),
    expect: bad(/messages\.0\.content\.0: Input tag 'tool_reference' found using 'type' does not match/),
  },
];
