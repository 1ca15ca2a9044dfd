import type { Message } from "@forkloop/loop-core";

const MAX = 160;

function cut(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > MAX ? `${flat.slice(0, MAX)}…` : flat;
}

/** One readable line per transcript message, for `sessions show` and `replay`. */
export function describeMessage(message: Message): string {
  switch (message.type) {
    case "system":
      return `  [${message.subtype}] ${cut(message.content)}`;
    case "user": {
      const content = message.message.content;
      if (typeof content === "string") return `  user${message.isMeta ? " (meta)" : ""}: ${cut(content)}`;
      return content
        .map((block) => {
          if (block.type === "text") return `  user${message.isMeta ? " (meta)" : ""}: ${cut(block.text)}`;
          if (block.type === "tool_result") {
            const text =
              typeof block.content === "string"
                ? block.content
                : (block.content ?? [])
                    .map((part) => (part.type === "text" ? part.text : `[${part.type}]`))
                    .join(" ");
            return `  tool_result ${block.tool_use_id}${block.is_error ? " (error)" : ""}: ${cut(text)}`;
          }
          return `  user: [${block.type}]`;
        })
        .join("\n");
    }
    case "assistant": {
      if (message.apiError)
        return `  api error ${message.apiError.status ?? ""} ${message.apiError.type}: ${cut(message.apiError.message)}`;
      const lines = message.message.content.map((block) => {
        if (block.type === "text") return `  assistant: ${cut(block.text)}`;
        if (block.type === "tool_use") return `  tool_use ${block.name} ${cut(JSON.stringify(block.input))}`;
        if (block.type === "thinking") return `  thinking: ${cut(block.thinking)}`;
        return `  assistant: [${block.type}]`;
      });
      lines.push(`    (stop_reason ${message.message.stop_reason ?? "none"})`);
      return lines.join("\n");
    }
    default: {
      const unreachable: never = message;
      return `  ${JSON.stringify(unreachable)}`;
    }
  }
}
