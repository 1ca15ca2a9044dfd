import type Anthropic from "@anthropic-ai/sdk";
import type { PermissionProvenance } from "./permissions.js";

/** Wire types of the Messages API, re-exported so sibling packages need not import the SDK. */
export type ContentBlockParam = Anthropic.Messages.ContentBlockParam;
export type ContentBlock = Anthropic.Messages.ContentBlock;
export type ToolUseBlock = Anthropic.Messages.ToolUseBlock;
export type ToolResultBlockParam = Anthropic.Messages.ToolResultBlockParam;
export type TextBlockParam = Anthropic.Messages.TextBlockParam;
export type MessageParam = Anthropic.Messages.MessageParam;
export type ApiMessage = Anthropic.Messages.Message;
export type Usage = Anthropic.Messages.Usage;
export type StopReason = Anthropic.Messages.StopReason;
export type RawMessageStreamEvent = Anthropic.Messages.RawMessageStreamEvent;

/** Every message in a forkloop transcript carries a uuid and the uuid of its parent (a chain). */
interface MessageBase {
  readonly uuid: string;
  readonly parentUuid: string | null;
  /** ISO-8601 time the message was created. */
  readonly timestamp: string;
}

export interface UserMessage extends MessageBase {
  readonly type: "user";
  readonly message: { readonly role: "user"; readonly content: string | readonly ContentBlockParam[] };
  /** Injected by forkloop itself (nudges, recovery prompts, hook feedback), not typed by a person. */
  readonly isMeta?: boolean;
  /** Set on the user message that interrupted a run (R-L16); `toolUse` when tools were running. */
  readonly interrupt?: { readonly toolUse: boolean };
  /**
   * On a tool result's message: the call's `toolUseResult` (`toolUseResultOf`, the tool's structured
   * output), which stream-json and the SDK print as `tool_use_result` (R-K2, R-X1). Never sent to the API.
   */
  readonly toolUseResult?: unknown;
  /** On a tool result's message: how the call's permission check ended (R-K2, `tool_result_meta`). */
  readonly toolResultMeta?: ToolResultMeta;
}

/**
 * How a tool call's permission check ended, as Claude Code reports it beside the result
 * (`tool_result_meta`): the decision and who made it, why a refused call did not run (a rule, a
 * hook or the program refused it: `permission-rule`; nobody could answer, or the user cut it:
 * `user-rejected`), and whether a hook or the program changed the input. Never sent to the API.
 */
export interface ToolResultMeta {
  readonly permission?: {
    readonly decision: "accept" | "reject";
    readonly source: PermissionProvenance["source"];
    readonly reasonType?: PermissionProvenance["reasonType"];
  };
  readonly notRun?: "permission-rule" | "user-rejected";
  readonly inputChanged?: true;
}

export interface AssistantMessage extends MessageBase {
  readonly type: "assistant";
  /** The API's response message (content, model, stop_reason, usage). */
  readonly message: ApiMessage;
  /** The API response's `request-id` header, when a response came (stream-json's `request_id`). */
  readonly requestId?: string;
  /** Set when this message stands for an API error rather than a model reply (R-L9, R-L11). */
  readonly apiError?: { readonly status: number | null; readonly type: string; readonly message: string };
}

/** A marker in the history that is never sent to the API as-is (compaction boundaries, notices). */
export interface SystemMessage extends MessageBase {
  readonly type: "system";
  /**
   * `model_context`: text for the model that no one typed (a PostToolBatch hook's context, R-X1),
   * sent as a mid-conversation system message where the model takes one (else as text of the
   * user turn before it) — kept in the transcript, so a resumed session sends it again.
   */
  readonly subtype:
    | "compact_boundary"
    | "snip_boundary"
    | "microcompact_boundary"
    | "informational"
    | "model_context";
  readonly content: string;
  readonly compactMetadata?: {
    readonly trigger: "auto" | "manual" | "reactive";
    readonly preTokens: number;
    readonly postTokens: number;
    /**
     * What compactions have removed so far in the session, this one included (each one's pre
     * less post tokens, carried from the boundary before): Claude Code's `cumulative_dropped_tokens`.
     */
    readonly cumulativeDroppedTokens?: number;
  };
  /**
   * R-C2: on a `microcompact_boundary` from the API's context editing (the cached variant), the
   * figures the response reported (`context_management.applied_edits`).
   */
  readonly microcompactMetadata?: {
    readonly source: "api";
    readonly clearedInputTokens: number;
    readonly clearedToolUses: number;
    readonly clearedThinkingTurns: number;
  };
}

export type Message = UserMessage | AssistantMessage | SystemMessage;
