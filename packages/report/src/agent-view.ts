import { costUsd, getModelInfo, type Message, type Usage } from "@forkloop/loop-core";
import { contextLimitsFor, type TranscriptRecord } from "@forkloop/orchestrator";
import { type TextBudget, toMessageView } from "./message-view.js";
import type { AgentView, MarkerView, RequestView, TokenCounts, ToolCallView } from "./report-data.js";

type Record_<T extends TranscriptRecord["type"]> = Extract<TranscriptRecord, { type: T }>;

export interface AgentViewOptions {
  readonly parentId?: string | null;
  readonly label?: string;
  readonly budget: TextBudget;
  readonly torn?: boolean;
  /** The transcript is damaged midway (R-R4): what is shown and what is not. */
  readonly damage?: string;
}

export interface BuiltAgentView {
  readonly view: AgentView;
  /** What each tool call of this agent was for (its children's labels): tool_use id → words. */
  readonly toolLabels: ReadonlyMap<string, string>;
}

const ZERO: TokenCounts = { input: 0, cacheWrite: 0, cacheRead: 0, output: 0 };
const MARKER_KINDS = new Set<string>(["compact_boundary", "snip_boundary", "microcompact_boundary"]);

function tokensOf(usage: Usage): TokenCounts {
  return {
    input: usage.input_tokens,
    cacheWrite: usage.cache_creation_input_tokens ?? 0,
    cacheRead: usage.cache_read_input_tokens ?? 0,
    output: usage.output_tokens,
  };
}

function addTokens(a: TokenCounts, b: TokenCounts): TokenCounts {
  return {
    input: a.input + b.input,
    cacheWrite: a.cacheWrite + b.cacheWrite,
    cacheRead: a.cacheRead + b.cacheRead,
    output: a.output + b.output,
  };
}

function time(iso: string | undefined): number | null {
  if (iso === undefined) return null;
  const ms = Date.parse(iso);
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The messages of a transcript in the order first written, each once (a resumed session may
 * re-append history), and how many of them a fork inherited: the leading run of messages a
 * sub-agent's transcript starts with is the parent's history up to its last assistant turn,
 * followed by the fork's own prompt.
 */
function ownMessages(records: readonly TranscriptRecord[], isFork: boolean) {
  const seen = new Set<string>();
  const messages: { message: Message; position: number }[] = [];
  let leadingRun = 0;
  let leading = true;
  records.forEach((record, position) => {
    if (record.type === "session_start") return;
    if (record.type !== "message") {
      leading = false;
      return;
    }
    if (leading) leadingRun++;
    if (seen.has(record.message.uuid)) return;
    seen.add(record.message.uuid);
    messages.push({ message: record.message, position });
  });
  let inherited = 0;
  if (isFork) {
    for (let index = 0; index < Math.min(leadingRun, messages.length); index++)
      if (messages[index]?.message.type === "assistant") inherited = index + 1;
  }
  return { inherited, own: messages.slice(inherited) };
}

/** What a tool call was for, in a few words (a child's label in the fork tree). */
function describeCall(name: string, input: unknown): string {
  const fields = (input ?? {}) as Record<string, unknown>;
  const words = fields.description ?? fields.skill ?? fields.file_path ?? fields.pattern ?? fields.command;
  return typeof words === "string" ? `${name}: ${words}` : name;
}

function summarize(input: unknown): string {
  const text = JSON.stringify(input ?? {}) ?? "";
  return text.length > 160 ? `${text.slice(0, 160)}…` : text;
}

/** Pure: one transcript's records → what the report shows of that agent. */
export function buildAgentView(
  records: readonly TranscriptRecord[],
  options: AgentViewOptions,
): BuiltAgentView {
  const start = records.find((record): record is Record_<"session_start"> => record.type === "session_start");
  const model = start?.model ?? "unknown";
  const info = getModelInfo(model);
  const isFork = start !== undefined && (start.parent !== undefined || start.querySource !== "sdk");
  const { inherited, own } = ownMessages(records, isFork);
  const replies = new Map<string, Message & { type: "assistant" }>();
  for (const { message } of own) if (message.type === "assistant") replies.set(message.uuid, message);

  const requestRecords = records.filter((record): record is Record_<"request"> => record.type === "request");
  const timed = requestRecords.length > 0;
  const priced = (modelId: string, usage: Usage | undefined, recorded?: number) =>
    recorded ?? (usage ? costUsd(getModelInfo(modelId || model), usage) : 0);
  const requests: RequestView[] = timed
    ? requestRecords.map((record) => {
        const reply = record.messageUuid === undefined ? undefined : replies.get(record.messageUuid);
        const usage = reply && !reply.apiError ? reply.message.usage : undefined;
        return {
          startedAt: time(record.startedAt),
          firstTokenAt: time(record.firstTokenAt),
          endedAt: time(record.endedAt),
          model: record.model,
          outcome: record.outcome,
          tokens: usage ? tokensOf(usage) : null,
          costUsd: usage ? priced(record.model, usage, record.costUsd) : 0,
          retries: record.retries.map((retry) => ({
            at: time(retry.at) ?? 0,
            attempt: retry.attempt,
            error: retry.error,
          })),
          fallbackTo: record.fallbackTo ?? null,
          error: reply?.apiError?.message ?? null,
        };
      })
    : [...replies.values()].map((reply) => ({
        startedAt: null,
        firstTokenAt: null,
        endedAt: time(reply.timestamp),
        model: reply.message.model || model,
        outcome: reply.apiError ? ("api_error" as const) : ("reply" as const),
        tokens: reply.apiError ? null : tokensOf(reply.message.usage),
        costUsd: reply.apiError ? 0 : priced(reply.message.model, reply.message.usage),
        retries: [],
        fallbackTo: null,
        error: reply.apiError?.message ?? null,
      }));
  const requestOf = new Map<string, number>();
  if (timed) {
    requestRecords.forEach((record, index) => {
      if (record.messageUuid !== undefined) requestOf.set(record.messageUuid, index);
    });
  } else {
    for (const [index, uuid] of [...replies.keys()].entries()) requestOf.set(uuid, index);
  }

  // Tool calls: asked for in a reply, started at their PreToolUse stamp, ended by their result.
  const startedAt = new Map<string, number | null>();
  for (const record of records)
    if (record.type === "tool_started") startedAt.set(record.toolUseId, time(record.at));
  const results = new Map<string, { at: number | null; isError: boolean }>();
  for (const { message } of own) {
    if (message.type !== "user" || typeof message.message.content === "string") continue;
    for (const block of message.message.content)
      if (block.type === "tool_result")
        results.set(block.tool_use_id, { at: time(message.timestamp), isError: block.is_error === true });
  }
  const tools: ToolCallView[] = [];
  const toolLabels = new Map<string, string>();
  for (const reply of replies.values()) {
    if (reply.apiError) continue;
    for (const block of reply.message.content) {
      if (block.type !== "tool_use") continue;
      const result = results.get(block.id);
      toolLabels.set(block.id, describeCall(block.name, block.input));
      tools.push({
        id: block.id,
        name: block.name,
        request: requestOf.get(reply.uuid) ?? -1,
        startedAt: startedAt.get(block.id) ?? null,
        endedAt: result?.at ?? null,
        status: result === undefined ? "pending" : result.isError ? "error" : "ok",
        summary: summarize(block.input),
      });
    }
  }

  // Boundaries sit between requests: count what came before each in the file's order.
  const markers: MarkerView[] = [];
  const ownPositions = new Map(own.map(({ message, position }) => [message.uuid, position]));
  const requestPositions = timed
    ? records.flatMap((record, position) => (record.type === "request" ? [position] : []))
    : [...replies.keys()].map((uuid) => ownPositions.get(uuid) ?? 0);
  for (const { message, position } of own) {
    if (message.type !== "system" || !MARKER_KINDS.has(message.subtype)) continue;
    markers.push({
      kind: message.subtype as MarkerView["kind"],
      at: time(message.timestamp),
      afterRequest: requestPositions.filter((at) => at < position).length,
      trigger: message.compactMetadata?.trigger ?? null,
      preTokens: message.compactMetadata?.preTokens ?? null,
      postTokens: message.compactMetadata?.postTokens ?? null,
      detail: message.content,
    });
  }

  const terminals = records.filter((record): record is Record_<"terminal"> => record.type === "terminal");
  const requestTokens = requests.reduce((sum, request) => addTokens(sum, request.tokens ?? ZERO), ZERO);
  // A resumed main session has one terminal per run; each carries that run's figures.
  const tokens =
    terminals.length > 0
      ? terminals.reduce(
          (sum, terminal) =>
            addTokens(sum, {
              input: terminal.usage.inputTokens,
              cacheWrite: terminal.usage.cacheCreationInputTokens,
              cacheRead: terminal.usage.cacheReadInputTokens,
              output: terminal.usage.outputTokens,
            }),
          ZERO,
        )
      : requestTokens;
  const first = requests.find((request) => request.tokens !== null)?.tokens;
  const firstInput = first ? first.input + first.cacheWrite + first.cacheRead : 0;
  const lastTerminal = terminals.at(-1);
  const abandoned = new Set(
    requestRecords.flatMap((record) =>
      record.outcome === "fallback" && record.messageUuid !== undefined ? [record.messageUuid] : [],
    ),
  );
  const cutsBefore = options.budget.cuts;
  const messages = own.map(({ message }) =>
    toMessageView(
      message,
      options.budget,
      abandoned.has(message.uuid) ? "abandoned (model fallback)" : undefined,
    ),
  );
  const rateLimits = records.flatMap((record) =>
    record.type === "rate_limited" ? [{ at: time(record.at) ?? 0, until: time(record.until) ?? 0 }] : [],
  );
  const lastTime = [...requests.map((request) => request.endedAt), ...messages.map((message) => message.at)]
    .filter((at): at is number => at !== null)
    .reduce((latest, at) => Math.max(latest, at), Number.NEGATIVE_INFINITY);

  const view: AgentView = {
    id: start?.agentId ?? "unknown",
    parentId: options.parentId ?? null,
    querySource: start?.querySource ?? "unknown",
    label: options.label ?? (isFork ? (start?.querySource ?? "fork") : "main agent"),
    model,
    status:
      lastTerminal?.reason ??
      (options.damage !== undefined
        ? "damaged transcript"
        : options.torn
          ? "torn transcript"
          : "no end recorded"),
    problem:
      options.damage ??
      (options.torn ? "the transcript's last record was torn (a crash mid-write); it was left out" : null),
    createdAt: time(start?.createdAt),
    endedAt: time(lastTerminal?.endedAt) ?? (Number.isFinite(lastTime) ? lastTime : null),
    turns:
      terminals.length > 0
        ? terminals.reduce((sum, terminal) => sum + terminal.turnCount, 0)
        : requests.filter((request) => request.outcome === "reply").length,
    tokens,
    costUsd:
      terminals.length > 0
        ? terminals.reduce((sum, terminal) => sum + terminal.costUsd, 0)
        : requests.reduce((sum, request) => sum + request.costUsd, 0),
    firstRequestCacheShare: isFork && first && firstInput > 0 ? first.cacheRead / firstInput : null,
    limits: start?.limits ?? contextLimitsFor(info),
    requests,
    tools,
    markers,
    rateLimits,
    inheritedMessages: inherited,
    messages,
    messagesCut: options.budget.cuts > cutsBefore,
    timed,
  };
  return { view, toolLabels };
}
