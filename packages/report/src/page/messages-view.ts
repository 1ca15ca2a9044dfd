import type { BlockView, MessageView } from "../report-data.js";
import { type Child, h } from "./dom.js";
import * as format from "./format.js";

function blockElement(block: BlockView): HTMLElement {
  switch (block.type) {
    case "text":
      return h("pre", { class: "block text" }, block.text);
    case "thinking":
      return h(
        "details",
        { class: "block thinking" },
        h("summary", {}, "thinking"),
        h("pre", {}, block.text),
      );
    case "tool_use":
      return h(
        "div",
        { class: "block tool-use", data: { toolUseId: block.id } },
        h("div", { class: "block-title" }, `tool call ${block.name}`, h("code", {}, block.id)),
        h("pre", {}, block.input),
      );
    case "tool_result":
      return h(
        "div",
        {
          class: `block tool-result${block.isError ? " is-error" : ""}`,
          data: { toolUseId: block.toolUseId },
        },
        h(
          "div",
          { class: "block-title" },
          block.isError ? "tool result (error)" : "tool result",
          h("code", {}, block.toolUseId),
        ),
        ...block.content.map(blockElement),
      );
    case "image": {
      if (block.data === null)
        return h(
          "div",
          { class: "block other" },
          `image ${block.mediaType}, ${format.count(block.bytes)} bytes (not shown)`,
        );
      const image = h("img", { class: "block image", attrs: { alt: `image ${block.mediaType}` } });
      // A data: URL of a raster type the report checked (message-view.ts): no script can ride it.
      image.src = `data:${block.mediaType};base64,${block.data}`;
      return image;
    }
    case "other":
      return h("div", { class: "block other" }, block.label);
  }
}

function preview(message: MessageView): string {
  for (const block of message.blocks) {
    if (block.type === "text") return block.text.slice(0, 120);
    if (block.type === "tool_use") return `→ ${block.name}`;
    if (block.type === "tool_result") {
      const first = block.content[0];
      return `← ${block.isError ? "error: " : ""}${first?.type === "text" ? first.text.slice(0, 100) : "result"}`;
    }
  }
  return "";
}

/** Messages, collapsed; a message's blocks are built the first time it is opened. */
export function messagesList(messages: readonly MessageView[], inherited: number, cut: boolean): HTMLElement {
  const notes: Child[] = [
    inherited > 0
      ? h("p", { class: "note" }, `${inherited} messages inherited from the parent are not shown.`)
      : null,
    cut ? h("p", { class: "note" }, "Some message text was cut to keep the report small.") : null,
  ];
  const items = messages.map((message) => {
    const details = h(
      "details",
      { class: `message role-${message.role}`, data: { uuid: message.uuid } },
      h(
        "summary",
        {},
        h("span", { class: "role" }, message.role),
        message.note ? h("span", { class: "badge" }, message.note) : null,
        h("span", { class: "when" }, format.clock(message.at)),
        h("span", { class: "preview" }, preview(message)),
      ),
    );
    details.addEventListener(
      "toggle",
      () => {
        if (details.open && details.childElementCount === 1)
          details.append(...message.blocks.map(blockElement));
      },
      { passive: true },
    );
    return details;
  });
  return h("div", { class: "messages" }, ...notes, ...items);
}
