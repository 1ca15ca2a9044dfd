import { type WithheldKind, withheldKind } from "./api-error-kinds.js";
import type { CacheSafeParams, RequestPrefix } from "./cache-safe-params.js";
import { apiMicrocompactBoundary } from "./context-editing.js";
import { contextTokens } from "./context-management.js";
import { createApiErrorMessage } from "./create-message.js";
import { FallbackTriggeredError } from "./errors.js";
import type { LoopEvent } from "./loop-events.js";
import { lastUuid, stripThinkingBlocks } from "./loop-messages.js";
import type { LoopRun } from "./loop-run.js";
import type { AssistantMessage, Message, SystemMessage } from "./messages.js";
import { yieldMissingToolResultBlocks } from "./missing-tool-results.js";
import { getModelInfo } from "./model-catalog.js";
import { StreamingToolExecutor } from "./streaming-tool-executor.js";
import type { Terminal } from "./terminal.js";
import type { ToolUseContext } from "./tool.js";

export interface ModelAttemptInput {
  readonly run: LoopRun;
  readonly toolUseContext: ToolUseContext;
  /** R-F3: the iteration's request prefix: each attempt sends its bytes. */
  readonly prefix: RequestPrefix;
  /** The history after context management: what this attempt sends. */
  readonly messages: readonly Message[];
}

/** A reply the model gave (or the withheld error it ended with), with the tools it started. */
export interface ModelReply {
  readonly type: "replied";
  /** The attempt's context: after a fallback (R-L8) its model is the fallback's. */
  readonly toolUseContext: ToolUseContext;
  /** What was sent; a fallback strips the thinking blocks bound to the abandoned model. */
  readonly messagesForQuery: readonly Message[];
  readonly assistantMessages: readonly AssistantMessage[];
  /** The replies in order, each followed by the API microcompact boundary it reported (R-C2). */
  readonly replies: readonly Message[];
  /** R-L9: a recoverable error or cut reply, kept back for the recovery ladder. */
  readonly withheld: { readonly message: AssistantMessage; readonly kind: WithheldKind } | undefined;
  /** R-T2: the tools that started while the reply streamed. */
  readonly executor: StreamingToolExecutor;
}

/** The model client threw: every open tool_use is answered, the loop ends with `model_error`. */
export interface ModelFailure {
  readonly type: "failed";
  readonly messages: readonly Message[];
  readonly error: NonNullable<Terminal["error"]>;
}

/**
 * Phase 4 (§1.2): one model call inside the R-L8 fallback loop. Streams the reply, starts safe
 * tools as their blocks complete (R-T2), withholds recoverable errors (R-L9), and on a fallback
 * or a crash answers the abandoned tool_use blocks (R-L12) — the loop's only sites that call
 * the model client. Retries, timeouts and the wire live in the client (`model-client.ts`).
 */
export async function* attemptModel(
  input: ModelAttemptInput,
): AsyncGenerator<LoopEvent, ModelReply | ModelFailure> {
  const { run } = input;
  const { config, deps } = run;
  let toolUseContext = input.toolUseContext;
  let messagesForQuery = input.messages;
  let model = toolUseContext.options.model;
  const newExecutor = () =>
    new StreamingToolExecutor({
      context: toolUseContext,
      canUseTool: run.canUseTool,
      hooks: run.hooks,
      uuid: deps.uuid,
    });
  let executor = newExecutor();
  let assistantMessages: AssistantMessage[] = [];
  // R-C2 cached variant: the API's microcompact boundaries of this attempt, kept in the history
  // right after the reply that reported them (transcripts and resumes see them; system messages
  // are never sent to the API, toApiMessages drops them).
  let apiBoundaries: SystemMessage[] = [];
  let withheld: ModelReply["withheld"];
  let fallbackIndex = config.fallbackModels.indexOf(model) + 1;
  const taskBudget = config.taskBudget
    ? {
        total: config.taskBudget.total,
        remaining: Math.max(
          0,
          config.taskBudget.total -
            run.usage.outputTokens -
            contextTokens(run.pipeline, messagesForQuery, config),
        ),
      }
    : undefined;
  try {
    for (;;) {
      // R-F3: what this attempt sends, announced as it goes; the request is built from these bytes.
      const prefix = attemptPrefix(
        input.prefix,
        model,
        // A fallback model may have a smaller output cap than the session's (R-L8, R-X2).
        Math.min(input.prefix.maxOutputTokens, getModelInfo(model, config.modelOverrides).maxOutputTokens),
        messagesForQuery,
      );
      yield { type: "request_start", model, querySource: config.querySource, prefix };
      const assistantUuid = deps.uuid();
      try {
        for await (const event of deps.callModel({
          client: config.client,
          model,
          systemPrompt: prefix.systemPrompt,
          tools: prefix.tools,
          messages: messagesForQuery,
          maxOutputTokens: prefix.maxOutputTokens,
          thinking: prefix.thinking,
          querySource: config.querySource,
          signal: toolUseContext.abortController.signal,
          taskBudget,
          outputConfig: config.outputConfig,
          fallbackAvailable: fallbackIndex < config.fallbackModels.length,
          retry: config.retry,
          beforeSend: config.beforeSend,
          parentUuid: lastUuid(messagesForQuery),
          assistantUuid,
          uuid: deps.uuid,
          contextEditing: config.contextEditing,
        })) {
          switch (event.type) {
            case "stream_event":
              yield event;
              break;
            case "api_retry":
              // A retried stream replays from scratch: tools started from the failed stream
              // are dropped (safe tools are read-only, running them again is harmless).
              executor.discard();
              executor = newExecutor();
              yield event;
              break;
            case "content_block_complete":
              // R-T2: start a safe tool the moment its block is complete, before message_stop.
              if (config.streamingToolExecution && event.block.type === "tool_use") {
                executor.addTool(event.block, assistantUuid);
              }
              break;
            case "assistant": {
              if (!event.apiError) run.usage.add(event.message.usage);
              // R-L9: recoverable errors are withheld until every recovery has failed.
              const kind = withheldKind(event);
              if (kind) {
                withheld = { message: event, kind };
                break;
              }
              assistantMessages.push(event);
              yield event;
              // R-C2 cached variant: what the API cleared is known only now, from the response.
              const boundary = config.contextEditing ? apiMicrocompactBoundary(event, deps.uuid) : undefined;
              if (boundary) {
                apiBoundaries.push(boundary);
                yield boundary;
              }
              if (config.streamingToolExecution && !event.apiError) {
                for (const block of event.message.content) {
                  if (block.type === "tool_use") executor.addTool(block, event.uuid);
                }
              }
              break;
            }
            default:
              assertNever(event);
          }
        }
        break;
      } catch (error) {
        const next = config.fallbackModels[fallbackIndex];
        if (!(error instanceof FallbackTriggeredError) || next === undefined) throw error;
        // R-L8 + R-L12 (fallback site): answer the abandoned attempt's tool_use blocks, then
        // tombstone everything it yielded so UIs drop it.
        executor.discard();
        const orphans = [
          ...yieldMissingToolResultBlocks(assistantMessages, [], "Model fallback triggered", deps.uuid),
        ];
        yield* orphans;
        for (const message of [...assistantMessages, ...orphans])
          yield { type: "tombstone", uuid: message.uuid };
        assistantMessages = [];
        apiBoundaries = [];
        withheld = undefined;
        yield { type: "model_fallback", from: model, to: next };
        model = next;
        fallbackIndex += 1;
        toolUseContext = { ...toolUseContext, options: { ...toolUseContext.options, model: next } };
        // Thinking signatures are bound to the model that produced them.
        messagesForQuery = stripThinkingBlocks(messagesForQuery);
        executor = newExecutor();
      }
    }
  } catch (error) {
    // R-L12 (model-crash site): whatever the model client threw, no tool_use stays open.
    executor.discard();
    const orphans = [
      ...yieldMissingToolResultBlocks(assistantMessages, [], "Model request failed", deps.uuid),
    ];
    yield* orphans;
    const failure = {
      status: null,
      type: error instanceof Error ? error.name : "model_error",
      message: error instanceof Error ? error.message : String(error),
    };
    const notice = createApiErrorMessage(failure, model, {
      uuid: deps.uuid(),
      parentUuid: lastUuid(messagesForQuery),
    });
    yield notice;
    return {
      type: "failed",
      messages: [
        ...messagesForQuery,
        ...withBoundaries(assistantMessages, apiBoundaries),
        ...orphans,
        notice,
      ],
      error: failure,
    };
  }
  return {
    type: "replied",
    toolUseContext,
    messagesForQuery,
    assistantMessages,
    replies: withBoundaries(assistantMessages, apiBoundaries),
    withheld,
    executor,
  };
}

/** The replies in order, each followed by the API microcompact boundary it reported (if any). */
function withBoundaries(
  replies: readonly AssistantMessage[],
  boundaries: readonly SystemMessage[],
): Message[] {
  if (boundaries.length === 0) return [...replies];
  return replies.flatMap((reply) => [
    reply,
    ...boundaries.filter((boundary) => boundary.parentUuid === reply.uuid),
  ]);
}

function assertNever(value: never): never {
  throw new Error(`unexpected model event: ${JSON.stringify(value)}`);
}

/** Every field attemptPrefix copies: a field added to CacheSafeParams fails the type check below. */
type AttemptPrefixField =
  | "model"
  | "systemPrompt"
  | "tools"
  | "toolChoice"
  | "thinking"
  | "effort"
  | "maxOutputTokens"
  | "forkContextMessages";
const everyPrefixFieldCopied: Exclude<keyof CacheSafeParams, AttemptPrefixField> extends never
  ? true
  : never = true;
void everyPrefixFieldCopied;

/**
 * The iteration's prefix as one attempt sends it: its model, output cap and messages. Field by
 * field in the prefix's own order (buildCacheSafeParams'), not a spread of the prefix: the spread
 * showed in the loop's CPU profile (loop bench), once per model call.
 */
function attemptPrefix(
  prefix: RequestPrefix,
  model: string,
  maxOutputTokens: number,
  messages: readonly Message[],
): CacheSafeParams {
  const params: { -readonly [K in keyof CacheSafeParams]?: CacheSafeParams[K] } = {
    model,
    systemPrompt: prefix.systemPrompt,
    tools: prefix.tools,
  };
  if (prefix.toolChoice !== undefined) params.toolChoice = prefix.toolChoice;
  if (prefix.thinking !== undefined) params.thinking = prefix.thinking;
  if (prefix.effort !== undefined) params.effort = prefix.effort;
  params.maxOutputTokens = maxOutputTokens;
  params.forkContextMessages = messages;
  return params as CacheSafeParams;
}
