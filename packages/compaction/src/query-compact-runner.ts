import {
  type AssistantMessage,
  apiErrorText,
  createAgentState,
  type Message,
  type QueryParams,
  query,
  type Terminal,
  type Tool,
  type UserMessage,
} from "@forkloop/loop-core";
import type { CompactRunner, CompactRunResult } from "./compact-conversation.js";
import { defaultMessageFactory, type MessageFactory, makeUserMessage } from "./message-shape.js";

export interface QueryCompactRunnerOptions {
  readonly client: NonNullable<QueryParams["client"]>;
  /** The parent's tools (their definitions are sent from the prefix as they are, R-F3). */
  readonly tools: readonly Tool[];
  /** Working directory of the fork's (unused, every call is denied) tool context. */
  readonly cwd?: string;
  readonly retry?: QueryParams["retry"];
  /** R-B1 (queue-wide rate limits): the agent's pre-send gate; a compact fork's request passes it too. */
  readonly beforeSend?: QueryParams["beforeSend"];
  readonly modelOverrides?: QueryParams["modelOverrides"];
  readonly messageFactory?: MessageFactory;
}

/**
 * The default CompactRunner: one `query()` with querySource `compact` (or `session_memory`), the
 * parent's exact system blocks, tools, model and thinking config, and messages = the parent's
 * history + the instruction. The request prefix is byte-identical to the parent's, so the whole
 * history is a cache read (R-F3). maxTurns 1 and every tool denied: the fork only writes text.
 */
export function createQueryCompactRunner(options: QueryCompactRunnerOptions): CompactRunner {
  const factory = options.messageFactory ?? defaultMessageFactory;
  return async ({ cacheSafeParams, instruction, signal, querySource }): Promise<CompactRunResult> => {
    const abortController = new AbortController();
    const forward = () => abortController.abort(signal.reason);
    if (signal.aborted) forward();
    else signal.addEventListener("abort", forward, { once: true });
    const cwd = options.cwd ?? process.cwd();
    const history: readonly Message[] = cacheSafeParams.forkContextMessages;
    const prompt: UserMessage = makeUserMessage(factory, instruction, history.at(-1)?.uuid ?? null);
    const replies: AssistantMessage[] = [];
    try {
      const run = query({
        messages: [...history, prompt],
        // R-F3: the parent's system blocks and tool definitions, sent as the parent sent them.
        systemPrompt: cacheSafeParams.systemPrompt,
        toolDefinitions: cacheSafeParams.tools,
        toolUseContext: {
          cwd,
          workspaceRoots: [cwd],
          tools: options.tools,
          abortController,
          agentId: querySource ?? "compact",
          agentState: createAgentState(),
          options: { model: cacheSafeParams.model, permissionMode: "plan" },
        },
        querySource: querySource ?? "compact",
        canUseTool: async () => ({
          behavior: "deny",
          message: "Tools are disabled while writing a summary.",
        }),
        client: options.client,
        maxTurns: 1,
        maxOutputTokens: cacheSafeParams.maxOutputTokens,
        streamingToolExecution: false,
        ...(cacheSafeParams.thinking === undefined ? {} : { thinking: cacheSafeParams.thinking }),
        // The prefix's effort too: an effort change invalidates the messages cache (R-D3).
        ...(cacheSafeParams.effort === undefined ? {} : { outputConfig: { effort: cacheSafeParams.effort } }),
        ...(options.retry === undefined ? {} : { retry: options.retry }),
        ...(options.beforeSend === undefined ? {} : { beforeSend: options.beforeSend }),
        ...(options.modelOverrides === undefined ? {} : { modelOverrides: options.modelOverrides }),
      });
      let next = await run.next();
      while (!next.done) {
        const event = next.value;
        if (event.type === "assistant" && !event.apiError) replies.push(event);
        next = await run.next();
      }
      const terminal = next.value;
      const reply = replies.at(-1);
      const text = reply?.message.content
        .flatMap((block) => (block.type === "text" ? [block.text] : []))
        .join("\n");
      if (!reply || !text || text.trim().length === 0) {
        return { ok: false, error: noSummaryText(terminal, cacheSafeParams.model) };
      }
      return { ok: true, summary: text, usage: reply.message.usage };
    } catch (error) {
      return { ok: false, error: error instanceof Error ? error.message : String(error) };
    } finally {
      signal.removeEventListener("abort", forward);
    }
  };
}

/**
 * Why the compact request gave no summary. An API error is in Claude Code's words, as the main
 * session's compaction says it (`API Error: 400 Invalid request`; a failed /compact prints it, R-X1).
 */
function noSummaryText(terminal: Terminal, model: string): string {
  const error = terminal.error;
  if (error === undefined) return `the compact request ended (${terminal.reason}) without a summary`;
  return error.status === undefined
    ? error.message
    : apiErrorText({ status: error.status, message: error.message }, model);
}
