import { messageSignature, scopeOf } from "../support/message-signature.js";
import type { Normaliser } from "../support/normalise.js";
import type { TraceEvent } from "./trace.js";

/**
 * What a program saw, in order, as comparable items: each message, hook call, canUseTool call,
 * Query method call and thrown error, keyed by a signature for alignment (`assistant[tool_use:Read]`,
 * `hook:PreToolUse(Read)`, `result/success`) and normalised.
 */
export interface TimelineItem {
  signature: string;
  /**
   * What field differences are reported under: the signature without the query number, the
   * content blocks and the tool name (`assistant`, `hook:PreToolUse`, `result/success`), so one
   * allowlist entry names a field of a kind of message wherever it appears.
   */
  scope: string;
  value: unknown;
}

export function timeline(events: readonly TraceEvent[], normaliser: Normaliser): TimelineItem[] {
  return items(events, normaliser).map((item) => ({ ...item, scope: scopeOf(item.signature) }));
}

function items(events: readonly TraceEvent[], normaliser: Normaliser): Omit<TimelineItem, "scope">[] {
  const items: Omit<TimelineItem, "scope">[] = [];
  for (const event of events) {
    const prefix = event.query > 0 ? `q${event.query}:` : "";
    switch (event.kind) {
      case "message":
        items.push({
          signature: prefix + messageSignature(event.message),
          value: normaliser.normalise(event.message),
        });
        break;
      case "hook": {
        const tool = typeof event.input.tool_name === "string" ? `(${event.input.tool_name})` : "";
        items.push({
          signature: `${prefix}hook:${event.event}${tool}`,
          value: normaliser.normalise({ input: event.input, toolUseID: event.toolUseID }),
        });
        break;
      }
      case "canUseTool":
        items.push({
          signature: `${prefix}canUseTool(${event.toolName})`,
          value: normaliser.normalise({ input: event.input, options: event.options }),
        });
        break;
      case "method":
        items.push({
          signature: `${prefix}${event.name}()`,
          value: normaliser.normalise(event.ok ? { result: event.result } : { error: event.error }),
        });
        break;
      case "error":
        items.push({ signature: `${prefix}thrown`, value: normaliser.normalise(event.error) });
        break;
      case "query":
      case "end":
        break;
      default:
        event satisfies never;
    }
  }
  return items;
}
