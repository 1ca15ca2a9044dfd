import { createHash } from "node:crypto";
import type { BuiltReply, ReplyStopReason, ResponseBlock } from "./build-reply.js";
import type { FaultDecision } from "./faults.js";
import type { MessagesRequest } from "./request-schema.js";

/** The fault kinds that rewrite a built reply into one a hostile model could send (R-R3). */
const HOSTILE_REPLY_FAULTS = ["duplicate_ids", "deep_input", "unknown_stop_reason", "huge_block"] as const;
export type HostileReplyFault = (typeof HOSTILE_REPLY_FAULTS)[number];

/** A stop reason no API version has: a client must not take it for any it knows. */
export const UNKNOWN_STOP_REASON = "a_stop_reason_from_the_future";

export function isHostileReplyFault(
  fault: FaultDecision | null,
): fault is FaultDecision & { kind: HostileReplyFault } {
  return fault !== null && (HOSTILE_REPLY_FAULTS as readonly string[]).includes(fault.kind);
}

type ToolUse = Extract<ResponseBlock, { type: "tool_use" }>;

/**
 * The reply as a hostile model sends it:
 * - `duplicate_ids`: the reply's first tool call twice under one id, then once more under the id
 *   of the last tool_use in the request's history (when it has one); its other tool calls go;
 * - `deep_input`: the first tool call's input nested `depth` levels deep (`{"a":{"a":…1}}`, held
 *   as a placeholder until it is written);
 * - `unknown_stop_reason`: the reply as built, with a stop_reason no API version has;
 * - `huge_block`: one text block of `bytes` characters (streamed in 64 KiB deltas), end_turn.
 * A reply without a tool call gets one of the request's first custom tool, input `{}`, for the
 * two tool faults (a request without one: the reply is sent unchanged).
 */
export function hostileReply(
  built: BuiltReply,
  fault: FaultDecision & { kind: HostileReplyFault },
  body: MessagesRequest,
  requestDigest: string,
): BuiltReply {
  switch (fault.kind) {
    case "unknown_stop_reason":
      return { ...built, stopReason: UNKNOWN_STOP_REASON as ReplyStopReason, stopDetails: null };
    case "huge_block": {
      const text = "x".repeat(fault.bytes);
      return {
        content: [{ type: "text", text }],
        stopReason: "end_turn",
        stopSequence: null,
        // The tokenizer's rule for a run of letters (one token per started 4), without a walk
        // over megabytes.
        outputTokens: Math.ceil(text.length / 4),
        stopDetails: null,
      };
    }
    case "duplicate_ids":
    case "deep_input": {
      const call = firstCall(built, body, requestDigest);
      if (call === null) return built;
      const others = built.content.filter((block) => block.type !== "tool_use");
      const calls =
        fault.kind === "deep_input"
          ? [{ ...call, input: { [DEEP_INPUT_KEY]: fault.depth } }]
          : [call, call, ...reused(call, body.messages)];
      return { ...built, content: [...others, ...calls], stopReason: "tool_use", stopDetails: null };
    }
  }
}

function firstCall(built: BuiltReply, body: MessagesRequest, requestDigest: string): ToolUse | null {
  const own = built.content.find((block): block is ToolUse => block.type === "tool_use");
  if (own) return own;
  const tool = (body.tools ?? []).find((candidate) => "input_schema" in candidate);
  if (tool === undefined) return null;
  const id = `toolu_01${createHash("sha256").update(`${requestDigest}:hostile`).digest("hex").slice(0, 22)}`;
  return { type: "tool_use", id, name: tool.name, input: {}, caller: { type: "direct" } };
}

/** The call once more under the id of the history's last tool_use, if there is one. */
function reused(call: ToolUse, messages: MessagesRequest["messages"]): ToolUse[] {
  for (const message of [...messages].reverse()) {
    if (typeof message.content === "string") continue;
    for (const block of [...message.content].reverse()) {
      if (block.type === "tool_use") return [{ ...call, id: block.id }];
    }
  }
  return [];
}

/**
 * A deep input is held as this placeholder and written as text where the reply is serialised
 * (`inputJson`, `expandDeepInputs`): JSON.stringify, structured clone and every recursive walk
 * overflow the stack at a few thousand levels — the simulator's own too.
 */
const DEEP_INPUT_KEY = "__forkloop_sim_deep_input__";
const DEEP_INPUT_PLACEHOLDER = new RegExp(`\\{"${DEEP_INPUT_KEY}":(\\d+)\\}`, "g");

/** `{"a":{"a":…1}}`, `depth` objects deep. */
function deepInputJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}

/** A tool_use input as JSON text (a deep_input placeholder as its nested text). */
export function inputJson(input: Record<string, unknown>): string {
  return expandDeepInputs(JSON.stringify(input));
}

/** Serialised reply text with every deep_input placeholder replaced by the nested input. */
export function expandDeepInputs(json: string): string {
  return json.includes(DEEP_INPUT_KEY)
    ? json.replace(DEEP_INPUT_PLACEHOLDER, (_match, depth: string) => deepInputJson(Number(depth)))
    : json;
}
