import { randomBytes } from "node:crypto";
import Anthropic from "@anthropic-ai/sdk";
import { createContextPipeline, createQueryCompactRunner } from "@forkloop/compaction";
import {
  type CanUseTool,
  costUsd,
  createAgentState,
  createUserMessage,
  getModelInfo,
  type LoopEvent,
  type Message,
  type PermissionMode,
  query,
  type Terminal,
  type Tool,
} from "@forkloop/loop-core";
import {
  assembleSession,
  loadTranscript,
  sessionTranscriptPath,
  TranscriptWriter,
} from "@forkloop/orchestrator";
import { createSettingsHooks, type Settings } from "@forkloop/tools";
import type { ModelEndpoint } from "./model-endpoint.js";

export interface MainSessionOptions {
  readonly endpoint: ModelEndpoint;
  readonly cwd: string;
  readonly sessionsDir: string;
  readonly prompt: string;
  readonly model: string;
  readonly fallbackModels: readonly string[];
  readonly permissionMode: PermissionMode;
  readonly tools: readonly Tool[];
  readonly canUseTool: CanUseTool;
  /** Settings files: their shell hooks (PreToolUse, PostToolUse, Stop …) run in the loop. */
  readonly settings: Settings;
  /** Non-blocking hook errors and hook system messages, one line each. */
  readonly onHookNotice?: (line: string) => void;
  readonly maxTurns?: number;
  readonly tokenBudget?: number;
  readonly appendSystemPrompt?: string;
  /** Continue this session: its transcript's history comes before the new prompt. */
  readonly resumeSessionId?: string;
  readonly signal: AbortSignal;
}

export interface MainSession {
  readonly sessionId: string;
  readonly transcriptPath: string;
  /** The loop's events; the generator returns the Terminal (R-L1). */
  readonly events: AsyncGenerator<LoopEvent, Terminal>;
}

export function newSessionId(): string {
  return `s-${new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15)}-${randomBytes(3).toString("hex")}`;
}

/**
 * The main agent of `forkloop run`: assembles the session (system prompt, memory, git state),
 * runs loop-core's query() in-process with the built-in tools and the compaction pipeline (its
 * compact fork reuses the exact request prefix, R-F3), and appends every message, state
 * transition (R-L5), CacheSafeParams snapshot and the terminal to the session transcript, so
 * `--resume`, `sessions show` and `replay` can read it back.
 */
export async function startMainSession(options: MainSessionOptions): Promise<MainSession> {
  const sessionId = options.resumeSessionId ?? newSessionId();
  const transcriptPath = sessionTranscriptPath(options.sessionsDir, sessionId);
  const history: Message[] = options.resumeSessionId
    ? [...(await loadTranscript(transcriptPath)).messages]
    : [];
  const session = await assembleSession({
    cwd: options.cwd,
    model: options.model,
    permissionMode: options.permissionMode,
    tools: options.tools,
    ...(options.appendSystemPrompt === undefined ? {} : { appendSystemPrompt: options.appendSystemPrompt }),
  });
  const client = new Anthropic({
    apiKey: options.endpoint.apiKey,
    ...(options.endpoint.baseURL === undefined ? {} : { baseURL: options.endpoint.baseURL }),
  });
  const pipeline = createContextPipeline({
    runCompact: createQueryCompactRunner({ client, tools: options.tools, cwd: options.cwd }),
  });
  const transcript = new TranscriptWriter(transcriptPath);
  if (!options.resumeSessionId) {
    transcript.append({
      type: "session_start",
      sessionId,
      agentId: "main",
      cwd: options.cwd,
      model: options.model,
      querySource: "sdk",
      createdAt: new Date().toISOString(),
    });
  }
  const userMessage = createUserMessage(options.prompt, { parentUuid: history.at(-1)?.uuid ?? null });
  transcript.append({ type: "message", message: userMessage });
  const abortController = new AbortController();
  const forwardAbort = () => abortController.abort(options.signal.reason);
  if (options.signal.aborted) forwardAbort();
  else options.signal.addEventListener("abort", forwardAbort, { once: true });

  const loop = query({
    messages: [...history, userMessage],
    systemPrompt: session.systemPrompt,
    toolUseContext: {
      cwd: options.cwd,
      workspaceRoots: [options.cwd, ...(options.settings.permissions.additionalDirectories ?? [])],
      tools: options.tools,
      abortController,
      agentId: "main",
      agentState: createAgentState(),
      options: { model: options.model, permissionMode: options.permissionMode },
    },
    querySource: "sdk",
    canUseTool: options.canUseTool,
    hooks: createSettingsHooks(options.settings, {
      cwd: options.cwd,
      sessionId,
      transcriptPath,
      onNotice: (notice) => options.onHookNotice?.(`hook ${notice.event} ${notice.kind}: ${notice.message}`),
    }),
    contextPipeline: pipeline,
    client,
    fallbackModels: options.fallbackModels,
    recordSnapshots: true,
    onCacheSafeParams: (params) => transcript.append({ type: "cache_safe_params", params }),
    ...(options.maxTurns === undefined ? {} : { maxTurns: options.maxTurns }),
    ...(options.tokenBudget === undefined ? {} : { tokenBudget: options.tokenBudget }),
  });

  async function* recorded(): AsyncGenerator<LoopEvent, Terminal> {
    let cost = 0;
    try {
      let step = await loop.next();
      while (!step.done) {
        const event = step.value;
        if (event.type === "user" || event.type === "assistant" || event.type === "system") {
          transcript.append({ type: "message", message: event });
          if (event.type === "assistant" && !event.apiError) {
            cost += costUsd(getModelInfo(event.message.model), event.message.usage);
          }
        } else if (event.type === "state_snapshot") {
          transcript.append({
            type: "transition",
            turnCount: event.turnCount,
            transition: event.transition,
            messageCount: event.messageCount,
          });
        }
        yield event;
        step = await loop.next();
      }
      const terminal = step.value;
      transcript.append({
        type: "terminal",
        reason: terminal.reason,
        turnCount: terminal.turnCount,
        usage: terminal.usage,
        costUsd: cost,
        endedAt: new Date().toISOString(),
      });
      return terminal;
    } finally {
      options.signal.removeEventListener("abort", forwardAbort);
      await pipeline.settle();
      transcript.close();
    }
  }
  return { sessionId, transcriptPath, events: recorded() };
}
